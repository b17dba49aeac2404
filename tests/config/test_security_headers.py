"""The Content-Security-Policy, Permissions-Policy and Cache-Control every page carries, the
CSP report endpoint, and templates with nothing the CSP would block (no inline script, no
inline event handler or hx-on, no style attribute).

The cast: ``storyteller`` runs the chronicle and the scene; ``player`` plays Janet in it;
``visitor`` is anonymous.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest
from django.conf import settings

from tests.conftest import client_for

TEMPLATES = Path(settings.BASE_DIR) / "templates"
# What the CSP forbids in markup: an inline script, an inline handler, htmx's hx-on (run by
# eval), a style attribute, a javascript: URL.
FORBIDDEN = {
    "inline script": re.compile(r"<script(?![^>]*\ssrc=)[^>]*>", re.I),
    "inline handler": re.compile(r"\son[a-z]+\s*=", re.I),
    "hx-on": re.compile(r"\shx-on[:-]", re.I),
    "style attribute": re.compile(r"\sstyle\s*=", re.I),
    "javascript: URL": re.compile(r"javascript:", re.I),
}


@pytest.mark.parametrize(
    "path", sorted(TEMPLATES.rglob("*.html")), ids=lambda p: str(p.relative_to(TEMPLATES))
)
def test_no_template_holds_what_the_csp_blocks(path: Path) -> None:
    text = path.read_text()
    found = {what for what, pattern in FORBIDDEN.items() if pattern.search(text)}
    assert not found, f"{path.relative_to(TEMPLATES)}: {sorted(found)}"


def _pages(scene, character) -> dict[str, tuple[str, bool]]:
    """Every page of a night: (who opens it, private to them)."""
    return {
        "/": ("player", True),
        "/accounts/login/": ("visitor", False),
        "/join/": ("player", True),
        f"/scenes/{scene.pk}/phone/": ("player", True),
        f"/characters/{character.pk}/": ("player", True),
        f"/characters/{character.pk}/print/": ("player", True),
        "/scenes/": ("storyteller", True),
        f"/scenes/{scene.pk}/": ("storyteller", True),
        f"/scenes/{scene.pk}/log.txt": ("storyteller", True),
        f"/scenes/{scene.pk}/log.json": ("storyteller", True),
        f"/chronicles/{scene.chronicle_id}/": ("storyteller", True),
    }


@pytest.mark.django_db
def test_every_page_of_a_night_carries_the_policies(
    scene, character, storyteller, player, visitor
) -> None:
    clients = {"player": client_for(player), "storyteller": client_for(storyteller)}
    clients["visitor"] = visitor
    for path, (who, private) in _pages(scene, character).items():
        response = clients[who].get(path)
        assert response.status_code == 200, path
        csp = response["Content-Security-Policy"]
        assert "default-src 'self'" in csp and "script-src 'self'" in csp, path
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp, path
        assert "report-uri /csp-report/" in csp, path
        assert response["Permissions-Policy"] == (
            "screen-wake-lock=(self), camera=(), microphone=(), geolocation=()"
        ), path
        if private:
            cache = response.get("Cache-Control", "")
            assert "private" in cache and "no-store" in cache, (path, cache)


@pytest.mark.django_db
def test_a_scene_post_reply_is_private_too(scene, storyteller) -> None:
    response = client_for(storyteller).post(
        f"/scenes/{scene.pk}/clock/",
        {"seconds": 60, "key": "clock-tap-0001"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]


@pytest.mark.django_db
def test_the_csp_report_endpoint_logs_a_report_on_one_line(visitor, caplog) -> None:
    report = {
        "csp-report": {
            "document-uri": "http://localhost:8000/scenes/1/phone/",
            "violated-directive": "style-src-attr",
            "blocked-uri": "inline",
            "original-policy": "default-src 'self'\nforged line",
        }
    }
    with caplog.at_level(logging.WARNING, logger="csp"):
        response = visitor.post(
            "/csp-report/", json.dumps(report), content_type="application/csp-report"
        )
    assert response.status_code == 204
    [record] = [r for r in caplog.records if r.name == "csp"]
    assert "style-src-attr" in record.getMessage() and "\n" not in record.getMessage()


@pytest.mark.django_db
def test_the_csp_report_endpoint_logs_a_flood_only_a_few_times(visitor, caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="csp"):
        for _ in range(100):
            assert (
                visitor.post("/csp-report/", "{}", content_type="application/json").status_code
                == 204
            )
    assert 20 <= len([r for r in caplog.records if r.name == "csp"]) < 40


def test_htmx_injects_no_style_of_its_own(client) -> None:
    """htmx's indicator <style> is turned off by the htmx-config meta tag in base.html."""
    base = (TEMPLATES / "base.html").read_text()
    config = re.search(r'<meta name="htmx-config" content=\'([^\']+)\'>', base)
    assert config and json.loads(config.group(1))["includeIndicatorStyles"] is False
