"""The admin dashboard's page (issue 22, item 4): served as HTML that never carries the admin token.
Its behaviour is tested in a real browser in tests/integration/test_admin_browser.py."""

from fastapi.testclient import TestClient

from toolroute.serve import create_app

TOKEN = "s3cret-admin-token-9f8a"


def test_the_dashboard_is_html_without_the_admin_token(monkeypatch):
    monkeypatch.setenv("TOOLROUTE_ADMIN_TOKEN", TOKEN)
    app = create_app(agent_factory=lambda llm: None, llm=object())
    client = TestClient(app, base_url="http://127.0.0.1")  # no lifespan: the page needs no agent
    page = client.get("/admin/tools")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.headers["cache-control"] == "no-store"
    assert "도구 관리" in page.text and 'href="../"' in page.text  # linked to the chat page
    assert TOKEN not in page.text and "sessionStorage" in page.text
    assert 'href="admin/tools"' in client.get("/").text  # and the chat page to the dashboard
