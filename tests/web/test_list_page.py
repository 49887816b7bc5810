"""The session list in a real browser: the new-session form built from the server's
options (profile, preset, environment, model, effort), the row's working directory,
cost and last update, filter and search, the keyboard alone, and a narrow screen."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.web.conftest import TrioThread, shell_call

SCRIPT = {
    "turns": [{"tool_calls": [shell_call("echo listed")]}, {"text": "Listed."}],
    "repeat": True,
}


def fits_the_width(page: Page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_new_session_form_and_the_row_it_makes(
    start_web: Callable[..., TrioThread], page: Page, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere-dir"
    elsewhere.mkdir()
    with start_web(SCRIPT) as stack:
        assert stack.server is not None
        requested: list[str] = []
        page.on("request", lambda request: requested.append(request.url))
        page.on("websocket", lambda socket: requested.append(socket.url))
        page.goto(stack.login_url)
        expect(page.locator("#link")).to_have_text("connected")
        page.get_by_role("button", name="New session").click()
        form = page.locator("form.new-form")
        # The choices are the server's: profiles, presets, the catalog's models.
        expect(form.get_by_label("Profile").locator("option")).to_have_text(
            ["anthropic", "gemini", "openai"]
        )
        expect(form.get_by_label("Profile")).to_have_value("openai")
        expect(form.get_by_label("Preset")).to_have_value("interactive")
        expect(form.get_by_label("Model")).to_have_attribute(
            "placeholder", "profile default: gpt-5.2-codex"
        )
        expect(form.locator("#model-choices option[value='gpt-5.2-codex']")).to_have_count(1)
        form.get_by_label("Profile").select_option("anthropic")
        expect(form.locator("#model-choices option[value='gpt-5.2-codex']")).to_have_count(0)
        expect(form.locator("#model-choices option[value='claude-sonnet-4-5']")).to_have_count(1)
        form.get_by_label("Profile").select_option("openai")

        form.get_by_label("Task").fill("list the files")
        form.get_by_label("Preset").select_option("permissive")
        form.get_by_label("Working directory").fill(str(elsewhere))
        form.get_by_label("Model").fill("gpt-5.2-codex")
        form.get_by_label("Reasoning effort").select_option("high")
        form.get_by_role("button", name="Start session").click()
        expect(page.locator(".timeline .assistant").last).to_contain_text("Listed.")
        session = page.url.rsplit("/", 1)[-1]
        config = stack.server.registry.record(session).config
        assert (config.policy, config.model, config.reasoning_effort) == (
            "permissive", "gpt-5.2-codex", "high"
        )  # fmt: skip

        expect(page.locator("#session-state")).to_have_text("idle")
        info = stack.server.registry.record(session).info()
        assert info.cost_usd is not None and info.cost_usd > 0
        shown = f"${info.cost_usd:.4f}" if info.cost_usd < 0.01 else f"${info.cost_usd:.2f}"
        expect(page.locator("#session-meta")).to_contain_text("iteration 2 · tokens 20 in")
        expect(page.locator("#session-meta")).to_contain_text(shown)

        page.get_by_role("link", name="← Sessions").click()
        row = page.locator(f"tr[data-session='{session}']")
        expect(row.locator(".env .dir")).to_have_text(str(elsewhere))
        expect(row.locator(".state")).to_have_text("idle")
        expect(row.locator(".cost")).to_have_text(shown)
        expect(row.locator(".when")).to_contain_text("ago")

        # Search reaches the working directory; the state filter narrows the rows.
        search = page.get_by_label("Filter sessions")
        search.fill("elsewhere-dir")
        expect(row).to_have_count(1)
        search.fill("nowhere-dir")
        expect(row).to_have_count(0)
        search.fill("")
        state = page.get_by_label("State filter")
        state.select_option("running a tool")
        expect(page.locator(".empty")).to_have_text("No session matches the filter.")
        state.select_option("idle")
        expect(row).to_have_count(1)
        # Everything the page loaded came from the server itself: no CDN, no fonts.
        origin = stack.login_url.split("/login", 1)[0].split("://", 1)[1]
        assert requested and all(
            url.split("://", 1)[1].startswith(origin + "/") for url in requested
        ), requested
        assert any(url.endswith("/stream.js") for url in requested), requested


def test_the_keyboard_alone_starts_a_session_and_narrow_screens_fit(
    start_web: Callable[..., TrioThread], page: Page
) -> None:
    with start_web(SCRIPT) as stack:
        page.goto(stack.login_url)
        expect(page.locator("#link")).to_have_text("connected")
        for _ in range(20):  # Tab to the button, as a keyboard user would
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.textContent") == "New session":
                break
        page.keyboard.press("Enter")
        expect(page.get_by_label("Task")).to_be_focused()
        page.keyboard.type("keyboard only")
        for _ in range(20):
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.textContent") == "Start session":
                break
        page.keyboard.press("Enter")
        expect(page.locator(".timeline .assistant").last).to_contain_text("Listed.")
        expect(page.locator("#composer-text")).to_be_focused()

        page.set_viewport_size({"width": 380, "height": 740})
        expect(page.locator("#session-state")).to_be_visible()
        assert fits_the_width(page)
        page.get_by_role("link", name="← Sessions").click()
        expect(page.locator("tr[data-session] .state")).to_have_text("idle")
        assert fits_the_width(page)
        page.get_by_role("button", name="New session").click()
        expect(page.get_by_label("Task")).to_be_visible()
        assert fits_the_width(page)
