"""MCP servers declared in the config files (``[mcp_servers.NAME]``): the project's
``.troupe/config.toml`` over the user's, reaching ``troupe run``'s session, whose
scripted model then calls the SDK-built fixture server's tool."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from actors.config import load_config, mcp_servers_for
from actors.config.files import mcp_servers_of
from actors.config.trust import set_trust
from tests.cli.conftest import Home, mock_llm, one_line, request_bodies
from tests.mcp.servers import FIXTURE
from tests.session.scripts import call, tool_names, turns


def fixture_table(name: str, **fields: str) -> str:
    command = json.dumps([sys.executable, str(FIXTURE)])
    extra = "".join(f"{key} = {json.dumps(value)}\n" for key, value in fields.items())
    return f"[mcp_servers.{name}]\ncommand = {command}\n{extra}"


async def test_the_projects_servers_reach_troupe_run(home: Home) -> None:
    script = turns([call("fx__echo", text="from the project")], "done")
    async with mock_llm(script) as mock:
        home.config.write_text(
            f'base_url = "{mock.base_url}"\n'
            '[mcp_servers.fx]\ncommand = ["false"]\n'  # the project's fx replaces it
            '[mcp_servers.gone]\nurl = "http://127.0.0.1:9/mcp"\n'
        )
        (home.work / ".troupe").mkdir()
        (home.work / ".troupe" / "config.toml").write_text(fixture_table("fx", category="write"))
        assert (await home.troupe("trust")).returncode == 0  # a project's servers need trust
        done = await home.troupe("run", "use the project's server")
        assert done.returncode == 0, done.stderr
        bodies = request_bodies(mock)
    assert "fx__echo" in tool_names(bodies[0])
    assert "echo: from the project" in json.dumps(bodies[1])


def test_project_servers_replace_the_users_by_name(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text('[mcp_servers.a]\ncommand = ["a"]\n[mcp_servers.b]\nurl = "http://b/mcp"\n')
    project = tmp_path / "work" / ".troupe" / "config.toml"
    project.parent.mkdir(parents=True)
    project.write_text('[mcp_servers.a]\ncommand = ["project-a"]\ncategory = "read"\n')
    env = {"TROUPE_CONFIG": str(user), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    untrusted = {s.name: s for s in mcp_servers_for(tmp_path / "work", env)}
    assert untrusted["a"].command == ["a"], "an untrusted project's servers are ignored"
    set_trust(tmp_path / "work", True, env)
    servers = {s.name: s for s in mcp_servers_for(tmp_path / "work", env)}
    assert servers["a"].command == ["project-a"] and servers["a"].category == "read"
    assert servers["b"].url == "http://b/mcp"


async def test_a_bad_server_table_is_one_line_naming_it(home: Home) -> None:
    (home.work / ".troupe").mkdir()
    path = home.work / ".troupe" / "config.toml"
    for table, says in [
        ('[mcp_servers.both]\ncommand = ["x"]\nurl = "http://x/mcp"\n', "exactly one of"),
        ('[mcp_servers.typo]\ncomand = ["x"]\n', "comand"),
        ('[mcp_servers.cat]\ncommand = ["x"]\ncategory = "root"\n', "category"),
    ]:
        path.write_text(table)
        done = await home.troupe("run", "hello")
        assert done.returncode == 2
        line = one_line(done.stderr)
        assert str(path) in line and "[mcp_servers." in line and says in line, line


def test_the_documented_tables_load(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text().split("### MCP servers", 1)[1]
    cli = (root / "docs" / "cli.md").read_text().split("## Config files", 1)[1]
    for text, names in [(readme, ["files"]), (cli, ["files", "search"])]:
        match = re.search(r"```toml\n(.*?)```", text, re.S)
        assert match is not None
        path = tmp_path / "config.toml"
        path.write_text(match.group(1))
        servers = mcp_servers_of(load_config(path), str(path))
        assert [server.name for server in servers] == names
        assert servers[0].command[:2] == ["npx", "-y"]


def test_path_arguments_are_declared_in_the_config_file(tmp_path: Path) -> None:
    """The docs/cli.md example: ``path_arguments`` by tool, read from TOML."""
    user = tmp_path / "user.toml"
    user.write_text('[mcp_servers.a]\ncommand = ["a"]\npath_arguments = { fetch_to = ["dest"] }\n')
    (server,) = mcp_servers_for(tmp_path, {"TROUPE_CONFIG": str(user)})
    assert server.path_arguments == {"fetch_to": ["dest"]}
