"""`--name` is a glob (`resnet-*`), so a name with brackets (`exp[v2]`) matched no job of
that name: `ls`, `kill` and `wait --name 'exp[v2]'` found none. The name itself matches too."""

from __future__ import annotations

from conftest import Herd


def test_a_name_with_brackets_is_found_by_itself_and_globs_still_match(
    shared_daemon: Herd,
) -> None:
    herd = shared_daemon
    bracketed = herd.submit("--hold", "--name", "exp[v2]", "--", "true")
    other = herd.submit("--hold", "--name", "expv", "--", "true")
    # The name itself, and, as a glob ([v2]: one letter, v or 2), `expv`, as before.
    assert herd.cli("ls", "-q", "--name", "exp[v2]").stdout.split() == [str(bracketed), str(other)]
    assert herd.cli("ls", "-q", "--name", "exp[[]v2]").stdout.split() == [str(bracketed)]
    assert herd.cli("ls", "-q", "--name", "exp[v]").stdout.split() == [str(other)]
    herd.cli("kill", str(bracketed), str(other))
