"""`clawback restore` and `sessions --deleted` bring back what Claude Code deleted."""

from __future__ import annotations

from pathlib import Path

from ..cli_runner import CLAWBACK
from ..cli_runner import run_cli as run
from .claude_code_world import SECRET, SID, resume


def test_restore_after_claude_code_deleted_the_session(world: dict[str, Path]) -> None:
    original = world["transcript"].read_bytes()
    world["transcript"].unlink()
    assert run("ingest", home=world["home"]).returncode == 0
    deleted = run("sessions", "--deleted", home=world["home"])
    assert deleted.stdout.startswith(SID[:8]) and "(source deleted)" in deleted.stdout
    assert "clawback restore ID" in deleted.stderr
    result = run("restore", SID[:8], home=world["home"])
    assert result.returncode == 0, result.stderr
    assert f"wrote {world['transcript']} (2 lines)" in result.stdout
    assert "Secrets were masked in this copy" in result.stderr and "[masked]" in result.stderr
    assert f"clawback resume {SID[:8]}" in result.stdout
    restored = world["transcript"].read_bytes().splitlines()
    assert restored[0] == original.splitlines()[0] and SECRET not in restored[1].decode()
    assert run("sessions", "--deleted", home=world["home"]).stdout == ""
    # Resumable again.
    assert resume(world, SID[:8]).returncode == 0


def test_restore_refuses_to_overwrite_and_force_keeps_a_backup(world: dict[str, Path]) -> None:
    world["transcript"].unlink()
    assert run("ingest", home=world["home"]).returncode == 0
    world["transcript"].write_text("something new\n")
    refused = run("restore", SID, home=world["home"])
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1
    assert "already exists; nothing was written (--force" in refused.stderr
    assert world["transcript"].read_text() == "something new\n"
    forced = run("restore", SID, "--force", home=world["home"])
    assert forced.returncode == 0, forced.stderr
    [backup] = world["transcript"].parent.glob(f"{SID}.jsonl.clawback-backup-*")
    assert backup.read_text() == "something new\n"
    assert f"now {backup}" in forced.stdout


def test_restore_to_another_folder(world: dict[str, Path], tmp_path: Path) -> None:
    result = run("restore", SID, "--to", str(tmp_path / "out"), home=world["home"])
    assert result.returncode == 0, result.stderr
    [written] = (tmp_path / "out").rglob("*.jsonl")
    assert written.name == f"{SID}.jsonl"
    assert written.parent.name == world["transcript"].parent.name


def test_restore_in_a_home_clawback_cannot_write_says_so_in_words(
    world: dict[str, Path],
) -> None:
    """Issue 31 item 17: it said only ``ingest.lock: Permission denied`` (a home the user
    cannot write) or that the home is read-only, and exited 1, though the transcript was back."""
    from ..home.test_damage import _in_private_mounts

    world["transcript"].unlink()
    assert run("ingest", home=world["home"]).returncode == 0
    home, user, out = world["home"], world["user"], world["home"].parent
    done = _in_private_mounts(
        f"mount --bind {home} {home}; mount -o remount,ro,bind {home}\n"
        f"HOME={user} CLAWBACK_HOME={home} {CLAWBACK} restore {SID[:8]}"
        f" > {out}/restore.out 2> {out}/restore.err; echo $? > {out}/restore.rc\n"
    )
    assert done.returncode == 0, done.stderr
    said = (out / "restore.err").read_text()
    assert (out / "restore.rc").read_text().strip() == "0", said
    assert f"wrote {world['transcript']}" in (out / "restore.out").read_text()
    warning = [line for line in said.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and "the transcript is back" in warning[0]
    assert f"{home} is read-only" in warning[0] and "Permission denied" not in said
    assert world["transcript"].is_file()


def test_permission_denied_is_said_in_words() -> None:
    import errno

    from clawback.core.faults import explain

    said = explain(PermissionError(errno.EACCES, "Permission denied"), Path("/h/cb/ingest.lock"))
    assert said.startswith("/h/cb cannot be written by you (Permission denied)")
