"""An objective's identity (its hash, hence its goal and budget) survives spacing and
Unicode normal forms."""

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from forge_runtime.goal.store.objective import normalise, objective_hash, parse_goal_prompt

words = st.lists(st.text(alphabet=st.characters(blacklist_categories=("Z", "C")), min_size=1),
                 min_size=1, max_size=6)
spaces = st.text(alphabet=" \t\n\u00a0\u2003", min_size=1, max_size=3)


@given(words, spaces, spaces, spaces)
def test_the_hash_ignores_how_whitespace_is_typed(parts, lead, sep, tail):
    typed = lead + sep.join(parts) + tail
    assert objective_hash(typed) == objective_hash(" ".join(parts))


@given(st.text(min_size=1))
def test_the_hash_is_the_same_for_composed_and_decomposed_text(text):
    assert objective_hash(unicodedata.normalize("NFD", text)) == \
        objective_hash(unicodedata.normalize("NFC", text))


def test_different_objectives_have_different_hashes():
    assert objective_hash("ship the parser") != objective_hash("ship the lexer")
    assert normalise("  café \t au  lait ") == "café au lait"


def test_goal_prompts_are_read_like_the_host_reads_them():
    assert parse_goal_prompt("/goal  ship   it ").objective == "ship it"
    assert parse_goal_prompt("/goal ship it").sets_goal
    for word in ("clear", "stop", "off", "reset", "none", "cancel", "CLEAR"):
        assert parse_goal_prompt(f"/goal {word}").is_clear
        assert not parse_goal_prompt(f"/goal {word}").sets_goal
    bare = parse_goal_prompt("/goal")
    assert bare is not None and not bare.sets_goal and not bare.is_clear
    assert parse_goal_prompt("/goals are nice") is None
    assert parse_goal_prompt("please /goal x") is None


@given(st.text())
def test_the_normalised_objective_is_what_a_hint_shows_and_normalising_is_stable(text):
    from forge_runtime.hints import sanitize

    shown = normalise(text)
    assert sanitize(shown) == shown
    assert normalise(shown) == shown


def test_invisible_characters_never_change_an_objective_and_never_join_words():
    assert objective_hash("ship\u200b the \u202eparser\u202c") == objective_hash("ship the parser")
    assert normalise("ship the\u2028parser") == "ship the parser"
    unseen = parse_goal_prompt("/goal \u200b\u2066")
    assert unseen.invisible and not unseen.sets_goal
    assert not parse_goal_prompt("/goal").invisible


@given(st.text(alphabet=st.characters(max_codepoint=0x7F)) | st.text())
def test_the_ascii_shortcut_normalises_as_the_full_path_does(text):
    """normalise() collapses printable ASCII's spaces without unicodedata; the full path
    (NFC, sanitize, NFC) must give the same objective for it, and for anything else too."""
    from forge_runtime.hints import sanitize

    full = unicodedata.normalize("NFC", sanitize(" ".join(
        unicodedata.normalize("NFC", text).split())))
    assert normalise(text) == full
