"""The scripted Messages API server, spoken to over HTTP the way the host speaks to it."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time

import pytest

from forge_runtime.hostkit.script import Script, ScriptError
from forge_runtime.hostkit.server import ModelServer

TOOL_SCRIPT = {"rules": [
    {"name": "finish", "when": {"last_is_tool_result": True}, "reply": {"text": "Done here."}},
    {"name": "write", "reply": {"text": "Writing.", "tool_calls": [
        {"name": "Write", "input": {"file_path": "{cwd}/done.txt", "content": "done\n"}}]}},
]}


def body(*messages, stream=True, **extra):
    return {"model": "claude-test", "max_tokens": 100, "stream": stream,
            "messages": list(messages) or [{"role": "user", "content": "go"}], **extra}


def post(server, payload, path="/v1/messages?beta=true", connection=None, raw=None):
    conn = connection or http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    data = raw if raw is not None else json.dumps(payload).encode()
    conn.request("POST", path, data, {"content-type": "application/json",
                                      "x-api-key": "sk-secret-123",
                                      "authorization": "Bearer sk-secret-456"})
    response = conn.getresponse()
    return response, response.read()


def sse(data: bytes) -> list[tuple[str, dict]]:
    events = []
    for chunk in data.decode().strip().split("\n\n"):
        name_line, data_line = chunk.split("\n")
        assert name_line.startswith("event: ") and data_line.startswith("data: ")
        events.append((name_line[7:], json.loads(data_line[6:])))
    return events


@pytest.fixture
def server(tmp_path):
    with ModelServer(Script(TOOL_SCRIPT), log_path=tmp_path / "requests.jsonl") as running:
        running.variables["cwd"] = "/project"
        yield running


def test_a_streamed_answer_follows_the_order_the_host_accepts(server):
    response, data = post(server, body())

    assert response.status == 200
    assert response.getheader("content-type") == "text/event-stream"
    assert int(response.getheader("content-length")) == len(data)
    events = sse(data)
    assert [name for name, _ in events] == [
        "message_start",
        "content_block_start", "content_block_delta", "content_block_stop",
        "content_block_start", "content_block_delta", "content_block_stop",
        "message_delta", "message_stop"]
    assert events[0][1]["message"]["content"] == []
    assert events[0][1]["message"]["usage"]["input_tokens"] > 0
    assert events[2][1]["delta"] == {"type": "text_delta", "text": "Writing."}
    tool_start = events[4][1]["content_block"]
    assert tool_start["type"] == "tool_use" and tool_start["input"] == {}
    assert tool_start["name"] == "Write" and tool_start["id"].startswith("toolu_")
    delta = events[5][1]["delta"]
    assert delta["type"] == "input_json_delta"
    assert json.loads(delta["partial_json"]) == {"file_path": "/project/done.txt",
                                                 "content": "done\n"}
    assert events[7][1]["delta"]["stop_reason"] == "tool_use"


def test_a_non_streamed_request_gets_the_whole_message_as_json(server):
    messages = [{"role": "user", "content": "go"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1",
                                                   "name": "Write", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                              "content": [{"type": "text", "text": "ok"}]}]},
                {"role": "system", "content": "a mid-conversation system message"}]
    response, data = post(server, body(*messages, stream=False, thinking={"type": "x"},
                                       context_management={}, output_config={"effort": "low"}))

    assert response.status == 200
    message = json.loads(data)
    assert message["content"] == [{"type": "text", "text": "Done here."}]
    assert message["stop_reason"] == "end_turn"
    assert server.requests[-1]["rule"] == "finish"


def test_ids_differ_between_answers(server):
    ids = [json.loads(post(server, body(stream=False))[1])["content"][1]["id"] for _ in range(2)]
    assert ids[0] != ids[1]


def test_the_log_keeps_every_request_with_the_key_redacted(server, tmp_path):
    post(server, body())
    post(server, body(stream=False))

    lines = [json.loads(line) for line in
             (tmp_path / "requests.jsonl").read_text().splitlines()]
    assert [entry["n"] for entry in lines] == [1, 2]
    assert lines == server.requests
    assert lines[0]["path"] == "/v1/messages?beta=true"
    assert lines[0]["headers"]["x-api-key"] == "[redacted]"
    assert lines[0]["headers"]["authorization"] == "[redacted]"
    assert "sk-secret" not in (tmp_path / "requests.jsonl").read_text()
    assert lines[0]["body"]["messages"] == [{"role": "user", "content": "go"}]


@pytest.mark.parametrize(("status", "kind"), [(429, "rate_limit_error"), (500, "api_error"),
                                              (529, "overloaded_error")])
def test_scripted_errors_carry_the_status_and_the_api_error_shape(tmp_path, status, kind):
    script = Script({"rules": [{"reply": {"error": {"status": status, "retry_after": 0}}}]})
    with ModelServer(script) as server:
        response, data = post(server, body())
    assert response.status == status
    assert response.getheader("retry-after") == "0"
    assert json.loads(data)["error"]["type"] == kind


def test_a_dropped_connection_sends_nothing_back():
    with ModelServer(Script({"rules": [{"reply": {"drop_connection": True}}]})) as server:
        with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
            post(server, body())
        assert server.requests[0]["outcome"] == "drop_connection"


def test_a_hanging_answer_is_released_when_the_server_stops():
    server = ModelServer(Script({"rules": [{"reply": {"hang": True}}]})).start()
    failures = []

    def ask():
        try:
            post(server, body())
        except (http.client.HTTPException, OSError) as exc:
            failures.append(exc)

    asker = threading.Thread(target=ask)
    asker.start()
    asker.join(0.3)
    assert asker.is_alive(), "a hang reply answered anyway"
    server.stop()
    asker.join(5)
    assert not asker.is_alive() and failures


def test_bad_requests_get_api_errors(server):
    response, data = post(server, None, raw=b"{not json")
    assert response.status == 400
    assert json.loads(data)["error"]["type"] == "invalid_request_error"
    response, _ = post(server, body(), path="/v1/complete")
    assert response.status == 404
    response, data = post(server, body(), path="/v1/messages/count_tokens?beta=true")
    assert response.status == 200 and json.loads(data)["input_tokens"] > 0


def test_the_unix_socket_serves_the_same_script(tmp_path):
    path = tmp_path / "model.sock"
    with ModelServer(Script(TOOL_SCRIPT), unix_path=path) as server:
        conn = http.client.HTTPConnection("localhost", timeout=5)
        conn.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.sock.connect(str(path))
        response, data = post(server, body(stream=False), connection=conn)
        assert response.status == 200 and json.loads(data)["stop_reason"] == "tool_use"
    assert not path.exists()


def test_codex_responses_requests_get_the_script_as_codex_items():
    script = Script({"rules": [
        {"name": "finish", "when": {"last_tool_result_contains": "denied by forge"},
         "reply": {"text": "Stopped."}},
        {"name": "act", "reply": {"tool_calls": [
            {"name": "Bash", "input": {"command": "ls {cwd}"}},
            {"name": "apply_patch", "input": {"patch": "*** Begin Patch\n*** End Patch\n"}}]}},
    ]})
    with ModelServer(script) as server:
        server.variables["cwd"] = "/p"
        first = {"model": "gpt", "stream": True, "instructions": "be brief", "input": [
            {"type": "message", "role": "developer",
             "content": [{"type": "input_text", "text": "ctx"}]},
            {"type": "function_call_output", "name": "goal_objective", "output": "host context"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}]}
        response, data = post(server, first, path="/v1/responses")
        events = sse(data)
        assert response.status == 200
        assert [name for name, _ in events] == [
            "response.created", "response.output_item.added", "response.output_item.done",
            "response.output_item.added", "response.output_item.done", "response.completed"]
        shell, patch = events[2][1]["item"], events[4][1]["item"]
        assert (shell["type"], shell["name"], json.loads(shell["arguments"])) == \
            ("function_call", "exec_command", {"cmd": "ls /p"})
        assert (patch["type"], patch["name"], patch["input"]) == \
            ("custom_tool_call", "apply_patch", "*** Begin Patch\n*** End Patch\n")
        second = {**first, "input": [*first["input"], shell, {
            "type": "function_call_output", "call_id": shell["call_id"],
            "output": "Command blocked: denied by forge"}]}
        _, data = post(server, second, path="/v1/responses")
        message = sse(data)[2][1]["item"]
        assert message["content"][0]["text"] == "Stopped."
        assert [r["rule"] for r in server.requests] == ["act", "finish"]


def test_an_answer_without_plan_usage_carries_the_windows_the_last_one_set():
    """An account's use does not vanish between answers: Claude Code shows no windows after
    an answer without the headers (its /goal verdict's too), so every later Messages API
    answer carries them; none before the first, and Codex's answers only their own."""
    script = Script({"rules": [
        {"name": "set", "when": {"last_user_text_contains": "set"},
         "reply": {"text": "ok", "plan_usage": {"five_hour": {"used": 85, "resets_in": 60}}}},
        {"reply": {"text": "ok"}}]})
    with ModelServer(script) as server:
        before, _ = post(server, body())
        assert before.getheader("anthropic-ratelimit-unified-status") is None
        post(server, body({"role": "user", "content": "set"}))
        reset = server.plan_resets["five_hour"]
        time.sleep(1.1)  # a window's reset stays where the reply that set it put it
        after, _ = post(server, body())
        assert after.getheader("anthropic-ratelimit-unified-5h-utilization") == "0.85"
        assert int(after.getheader("anthropic-ratelimit-unified-5h-reset")) == reset
        codex, _ = post(server, {"model": "m", "stream": True, "input": []},
                        path="/v1/responses")
        assert codex.getheader("x-codex-primary-used-percent") is None


def test_plan_usage_is_sent_as_each_hosts_rate_limit_headers():
    """Claude Code reads its subscription's windows from the unified headers (a fraction),
    Codex from x-codex-primary/secondary-* (a percentage and the window's length): measured,
    Codex 0.171.0 then records them in its rollout's token_count `rate_limits`."""
    script = Script({"rules": [{"reply": {"text": "ok",
                                          "plan_usage": {"five_hour": 85, "seven_day": 42}}}]})
    with ModelServer(script) as server:
        response, _ = post(server, body())
        assert response.getheader("anthropic-ratelimit-unified-5h-utilization") == "0.85"
        assert response.getheader("anthropic-ratelimit-unified-7d-utilization") == "0.42"
        assert response.getheader("anthropic-ratelimit-unified-status") == "allowed"
        codex, _ = post(server, {"model": "gpt-test", "stream": True, "input": []},
                        path="/v1/responses")
        assert codex.getheader("x-codex-primary-used-percent") == "85"
        assert codex.getheader("x-codex-primary-window-minutes") == "300"
        assert codex.getheader("x-codex-secondary-used-percent") == "42"
        assert codex.getheader("x-codex-secondary-window-minutes") == "10080"
        assert int(codex.getheader("x-codex-secondary-reset-at")) > 0


def test_a_plan_window_resets_at_one_time_until_a_reply_starts_a_new_one():
    """A provider's window resets at a fixed time, not a window's length after each reply;
    `{used, resets_in}` starts a new window that resets that many seconds later."""
    script = Script({"rules": [
        {"times": 1, "reply": {"text": "a", "plan_usage": {"five_hour": 10}}},
        {"times": 1, "reply": {"text": "b", "plan_usage": {"five_hour": 20, "seven_day": 5}}},
        {"reply": {"text": "c", "plan_usage": {"five_hour": {"used": 3, "resets_in": 60}}}}]})
    codex = {"model": "gpt-test", "stream": True, "input": []}
    with ModelServer(script) as server:
        first, _ = post(server, codex, path="/v1/responses")
        time.sleep(1.1)
        second, _ = post(server, codex, path="/v1/responses")
        third, _ = post(server, codex, path="/v1/responses")
    reset = int(first.getheader("x-codex-primary-reset-at"))
    assert reset >= time.time() + 300 * 60 - 5
    assert int(second.getheader("x-codex-primary-reset-at")) == reset
    assert second.getheader("x-codex-secondary-used-percent") == "5"
    assert third.getheader("x-codex-primary-used-percent") == "3"
    assert 0 < int(third.getheader("x-codex-primary-reset-at")) - time.time() <= 60


def test_a_reply_can_come_late():
    script = Script({"rules": [{"reply": {"text": "slow", "delay_s": 0.3}}]})
    with ModelServer(script) as server:
        started = time.monotonic()
        post(server, body())
        assert time.monotonic() - started >= 0.3


def test_a_stream_can_stall_before_its_closing_events():
    """The host applies an answer's rate-limit headers, and its final usage, at the end
    of its stream: a stall there is where a status line can see the answer without them."""
    script = Script({"rules": [{"reply": {"text": "half", "stall_before_end_s": 0.4}}]})
    with ModelServer(script) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        conn.request("POST", "/v1/messages?beta=true", json.dumps(body()).encode(),
                     {"content-type": "application/json"})
        response = conn.getresponse()
        started = time.monotonic()
        first = response.read1()
        while b"content_block_stop" not in first:
            first += response.read1()
        opened = time.monotonic() - started
        rest = response.read()
        assert time.monotonic() - started - opened >= 0.35
        assert b"message_delta" not in first and rest.startswith(b"event: message_delta")
        assert [name for name, _ in sse(first + rest)][-2:] == ["message_delta",
                                                                "message_stop"]


@pytest.mark.parametrize("window", [{"used": 101, "resets_in": 3}, {"resets_in": 3},
                                    {"used": 9, "resets_in": -1},
                                    {"used": 9, "resets_in": 1, "extra": 1}])
def test_a_plan_window_out_of_shape_is_a_script_error(window):
    with pytest.raises(ScriptError):
        Script({"rules": [{"reply": {"text": "ok", "plan_usage": {"five_hour": window}}}]})


def test_a_usage_limit_is_each_hosts_own_refusal():
    """Claude Code (measured, 2.1.332 on a subscription login) ends the turn on a 429 whose
    unified limiter says `rejected`, with the reset and the window that refused; Codex
    (0.171.0) on a 429 whose body is a `usage_limit_reached` error with `resets_at`."""
    script = Script({"rules": [{"reply": {"error": {
        "status": 429, "usage_limit": {"window": "seven_day", "resets_in": 90}}}}]})
    with ModelServer(script) as server:
        before = int(time.time())
        response, data = post(server, body())
        assert response.status == 429
        assert response.getheader("anthropic-ratelimit-unified-status") == "rejected"
        assert response.getheader("anthropic-ratelimit-unified-representative-claim") == \
            "seven_day"
        reset = int(response.getheader("anthropic-ratelimit-unified-reset"))
        assert before + 90 <= reset <= int(time.time()) + 90
        assert response.getheader("anthropic-ratelimit-unified-7d-status") == "rejected"
        assert json.loads(data)["error"]["type"] == "rate_limit_error"
        codex, data = post(server, {"model": "gpt-test", "stream": True, "input": []},
                           path="/v1/responses")
        error = json.loads(data)["error"]
        assert codex.status == 429 and error["type"] == "usage_limit_reached"
        assert before + 90 <= error["resets_at"] <= int(time.time()) + 90
    with pytest.raises(ScriptError):
        Script({"rules": [{"reply": {"error": {"status": 429,
                                               "usage_limit": {"window": "daily"}}}}]})


def test_a_replys_usage_may_split_its_cache_writes_by_lifetime():
    """Claude Code's one-hour cache writes come as `usage.cache_creation`'s
    `ephemeral_1h_input_tokens` (forge prices them at their own rate): a script may send
    them, and nothing else but whole numbers."""
    split = {"ephemeral_5m_input_tokens": 600, "ephemeral_1h_input_tokens": 400}
    usage = {"input_tokens": 10, "cache_creation_input_tokens": 1000, "cache_creation": split}
    with ModelServer(Script({"rules": [{"reply": {"text": "ok", "usage": usage}}]})) as server:
        _, data = post(server, body())
        sent = sse(data)[0][1]["message"]["usage"]
        assert sent["cache_creation"] == split and sent["cache_creation_input_tokens"] == 1000
    from forge_runtime.hostkit.script import ScriptError

    for wrong in ({"cache_creation": {"ephemeral_2h_input_tokens": 1}}, {"input_tokens": "9"},
                  {"cache_creation": {"ephemeral_1h_input_tokens": -1}}):
        with pytest.raises(ScriptError):
            Script({"rules": [{"reply": {"text": "ok", "usage": wrong}}]})
