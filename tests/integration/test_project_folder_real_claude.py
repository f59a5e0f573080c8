"""Where the real ``claude`` keeps a working folder's sessions, and where ``restore`` writes one
(opt-in, ``CLAWBACK_INTEGRATION=1``): the same folder name, also for a folder whose name is
longer than Claude Code keeps (it cuts at 200 and adds a hash; clawback's restore failed with
"File name too long") and for one with characters beyond U+FFFF."""

from __future__ import annotations

from pathlib import Path

import pytest
from clawback.core.archive.restore import project_folder

from .anthropic_standin import AnthropicStandin
from .test_real_claude import claude_home, offline_env, real_claude, standin  # noqa: F401
from .test_restore_real_claude import claude

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    "name",
    ["short-and_plain.dir", "/".join(["très long nom de dossier, " * 3] * 4), "emoji-🦘-and-é"],
    ids=["short", "over-200", "astral"],
)
def test_restore_names_the_project_folder_as_claude_code_does(
    real_claude: str,  # noqa: F811
    claude_home: Path,  # noqa: F811
    standin: AnthropicStandin,  # noqa: F811
    tmp_path: Path,
    name: str,
) -> None:
    project = tmp_path / name
    project.mkdir(parents=True)
    done = claude(real_claude, ["-p", "hello"], offline_env(standin, claude_home), project)
    assert done.returncode == 0, done.stderr
    [folder] = (claude_home / ".claude" / "projects").iterdir()
    assert project_folder(str(project)) == folder.name
