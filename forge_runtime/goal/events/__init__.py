"""What each hook event means for the session's goal, one module per event and the parts
they share: prompt (UserPromptSubmit), stop, session_end, tool_call (PreToolUse),
after_end (turns the host starts after a goal's end); confirm, catch_up, reading,
first_turn, held_prompt and replies below them; handed_in names what the
hooks hand them of the final gates and the sandbox (goal/ imports neither)."""
