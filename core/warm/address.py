"""Where a home's warm process listens, worked out with nothing but ``os``.

Every hook event starts a fresh ``clawback`` process whose first question is whether the warm
process can answer it; this module is all it imports to find the socket (no ``pathlib``, no
dataclasses), so a hook the warm process answers costs little more than a bare Python start.
The server (:mod:`.server`) listens at the same address, worked out the same way.

The socket is ``<home>/hooks/warm.sock``; for a home whose path makes that too long for a Unix
socket, a name made from the home in ``<tmp>/clawback-<uid>``, a folder checked to be this
user's alone (:func:`private_folder`).
"""

from __future__ import annotations

import os
import stat

SOCKET_NAME = "warm.sock"
#: a Unix socket's path is limited to about 104-108 bytes by the OS
MAX_SOCKET_PATH = 100
PRIVATE_DIR = 0o700


def home_folder(home: str | None) -> str:
    """The home a command names (``--home``, else ``$CLAWBACK_HOME``, else ``~/.clawback``),
    absolute and resolved, as :meth:`~clawback.core.paths.Paths.resolve` gives it."""
    chosen = home or os.environ.get("CLAWBACK_HOME") or os.path.join("~", ".clawback")
    return os.path.realpath(os.path.expanduser(chosen))


def hooks_folder(home: str) -> str:
    return os.path.join(home, "hooks")


def socket_address(home: str) -> str | None:
    """Where the warm process of ``home`` (resolved) listens, or ``None`` when its path is too
    long and the temp dir's folder is not safely this user's."""
    path = os.path.join(hooks_folder(home), SOCKET_NAME)
    if len(os.fsencode(path)) <= MAX_SOCKET_PATH:
        return path
    import hashlib  # only for a home this deep
    import tempfile

    folder = os.path.join(tempfile.gettempdir(), f"clawback-{os.getuid()}")
    digest = hashlib.blake2b(os.fsencode(home), digest_size=10).hexdigest()
    path = os.path.join(folder, f"{digest}.sock")
    if len(os.fsencode(path)) > MAX_SOCKET_PATH or not private_folder(folder):
        return None
    return path


def private_folder(folder: str) -> bool:
    """Whether ``folder`` (in a folder other users can write, the temp dir) is a folder of this
    user's that nobody else can write, made so when missing.

    It is never followed or changed when it is anything else: a link another user planted
    there would otherwise make this process chmod the link's target, and a folder another
    user can write would let their server answer prompts in this one's place."""
    try:
        os.mkdir(folder, PRIVATE_DIR)  # never follows a link: one in its place is "exists"
        made = True
    except FileExistsError:
        made = False
    except OSError:
        return False
    try:
        st = os.lstat(folder)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            return False
        if made and st.st_mode & 0o777 != PRIVATE_DIR:  # the umask took more than it should
            os.chmod(folder, PRIVATE_DIR)
            st = os.lstat(folder)
    except OSError:
        return False
    return st.st_mode & 0o777 == PRIVATE_DIR
