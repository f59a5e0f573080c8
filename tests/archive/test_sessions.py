"""The session listing's project filter and the projects listing, on the demo archive."""

from __future__ import annotations

import pytest
from clawback.core.archive.sessions import (
    Project,
    SessionSummary,
    count_sessions,
    list_sessions,
    parse_session_filter,
    project_name,
    projects,
)
from clawback.core.db import connect
from clawback.core.home import Home

CLAWBACK = "/home/demo/projects/clawback"
WEBSITE = "/home/demo/projects/website"


def titles(sessions: list[SessionSummary]) -> list[str]:
    return [s.title for s in sessions]


def test_projects_lists_each_folder_with_its_count_newest_first(demo_home: Home) -> None:
    listed = projects(demo_home.db)
    assert [(p.path, p.sessions) for p in listed] == [
        ("/home/demo", 2),  # the OpenClaw agent's folder; "Weekly review" is the newest
        (WEBSITE, 1),
        (CLAWBACK, 2),
    ]
    assert [p.name for p in listed] == ["demo", "website", "clawback"]
    assert listed[0].to_json() == {
        "path": "/home/demo",
        "sessions": 2,
        "updated_at": listed[0].updated_at,
        "name": "demo",
    }
    # The native chat has no working directory, so it is in no project.
    assert sum(p.sessions for p in listed) == len(list_sessions(demo_home.db)) - 1


def test_project_narrows_the_list_to_exactly_that_folder(demo_home: Home) -> None:
    assert titles(list_sessions(demo_home.db, project=CLAWBACK)) == [
        "Textual layout bug in the sidebar",
        "Choosing the search index",
    ]
    # Exact: the home folder is not a prefix match for the projects below it.
    assert titles(list_sessions(demo_home.db, project="/home/demo")) == [
        "Weekly review",
        "Trip planning with Alice",
    ]
    assert list_sessions(demo_home.db, project="/home/demo/projects") == []
    # Combined with a source and with the filter words.
    assert list_sessions(demo_home.db, project="/home/demo", source="claude-code") == []
    assert titles(list_sessions(demo_home.db, project=CLAWBACK, text="search")) == [
        "Choosing the search index"
    ]
    assert count_sessions(demo_home.db, project=CLAWBACK) == 2
    assert count_sessions(demo_home.db, "openclaw", "/home/demo") == 2
    assert count_sessions(demo_home.db, "native", CLAWBACK) == 0
    assert count_sessions(demo_home.db) == 6


def test_project_terms_in_the_filter_text_match_part_of_the_folder(demo_home: Home) -> None:
    assert parse_session_filter("deploy project:web  pipeline") == ("deploy pipeline", ["web"])
    assert parse_session_filter("Project:a project:b") == ("", ["a", "b"])
    assert parse_session_filter("project:") == ("", [])  # half typed: no narrowing yet
    assert parse_session_filter("myproject:x") == ("myproject:x", [])
    assert titles(list_sessions(demo_home.db, text="project:webs")) == [
        "Deploy pipeline for the website"
    ]
    assert len(list_sessions(demo_home.db, text="project:")) == 6
    assert len(list_sessions(demo_home.db, text="project:projects")) == 3
    assert titles(list_sessions(demo_home.db, text="project:claw layout")) == [
        "Textual layout bug in the sidebar"
    ]
    assert titles(list_sessions(demo_home.db, project_contains="WEBSITE")) == [
        "Deploy pipeline for the website"
    ]


def test_like_wildcards_in_a_project_name_are_literal() -> None:
    db = connect()
    db.execute(
        "INSERT INTO sessions (id, source, cwd, updated_at, entry_count) VALUES"
        " ('a', 'claude-code', '/src/my_app', '2026-01-02', 1),"
        " ('b', 'claude-code', '/src/myXapp', '2026-01-01', 1),"
        " ('c', 'claude-code', '/src/100%', '2026-01-03', 1),"
        " ('d', 'claude-code', '/src/empty', '2026-01-04', 0)"
    )
    assert [s.id for s in list_sessions(db, project_contains="my_app")] == ["a"]
    assert [s.id for s in list_sessions(db, text="project:100%")] == ["c"]
    # A session with nothing to show is neither listed nor counted in its project.
    assert [p.path for p in projects(db)] == ["/src/100%", "/src/my_app", "/src/myXapp"]
    assert list_sessions(db, project="/src/empty") == []


def test_project_names_are_the_folder_name() -> None:
    assert project_name("/home/me/code/clawback") == "clawback"
    assert project_name("/home/me/code/clawback/") == "clawback"
    assert project_name("C:\\Users\\me\\site") == "site"
    assert project_name("/") == "/"
    assert Project("/x/y", 1, None).name == "y"


def test_filter_words_match_what_was_said_the_source_and_the_folder(demo_home: Home) -> None:
    """The filter matched its whole text against titles and keys: a word a person remembers
    from the conversation, the tool a session came from, or two words apart found nothing."""
    db = demo_home.db
    assert titles(list_sessions(db, text="kyoto")) == ["Trip planning with Alice"]  # said only
    # A word is a prefix as one types: "hug" is in "huge" and in "Hugo".
    assert titles(list_sessions(db, text="hug")) == [
        "Weekly review",
        "Deploy pipeline for the website",
        "Choosing the search index",
    ]
    assert titles(list_sessions(db, text="openclaw")) == [
        "Weekly review",
        "Trip planning with Alice",
    ]
    assert titles(list_sessions(db, text="Claude Code sidebar")) == [
        "Textual layout bug in the sidebar"
    ]
    assert titles(list_sessions(db, text="columns sidebar")) == [
        "Textual layout bug in the sidebar"  # two words of its messages, in any order
    ]
    assert titles(list_sessions(db, text="website hugo")) == ["Deploy pipeline for the website"]
    assert list_sessions(db, text="kyoto hugo") == []  # every word must match
    # A tool's call or output is not what a person said (every file read would match):
    # "actions/checkout" is only in the deploy session's workflow file.
    assert list_sessions(db, text="checkout") == []
    # ... and odd words look in the names only, without an FTS syntax error.
    assert list_sessions(db, text='-- "x*" AND (') == []
    assert titles(list_sessions(db, text="100%")) == []


def test_a_filter_word_reads_a_bounded_number_of_messages(
    demo_home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A common word's lookup reads only the newest messages holding it (it stays quick on a
    large archive): older sessions then match by their names only."""
    import clawback.core.archive.sessions as sessions

    every = list_sessions(demo_home.db, text="the")
    assert len(every) == 6  # four by their titles, two by what was said in them
    monkeypatch.setattr(sessions, "SAID_CAP", 1)
    assert len(list_sessions(demo_home.db, text="kyoto")) == 1  # the newest message holding it
    assert 4 <= len(list_sessions(demo_home.db, text="the")) < len(every)
