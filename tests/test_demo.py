"""`forge demo` refuses a --keep directory it would clobber, before starting anything."""

from __future__ import annotations

from forge_runtime.cli.main import main, parses


def test_keep_refuses_a_directory_that_is_not_empty(tmp_path, capsys):
    (tmp_path / "mine.txt").write_text("a person's file")

    code = main(["demo", "--keep", str(tmp_path)])

    assert code == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"Error: {tmp_path} already exists and is not an empty directory"
    assert err[1] == f"Fix: forge demo --keep {tmp_path.name}-2"
    assert parses(f"forge demo --keep {tmp_path.name}-2")
    assert (tmp_path / "mine.txt").read_text() == "a person's file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]
