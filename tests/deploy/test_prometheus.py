"""deploy/: promtool checks, a real Prometheus scraping a real daemon, and the dashboard.

These need Debian's ``prometheus`` package (``promtool`` and ``prometheus``), which
``.ci/run`` installs. Outside CI, a machine without it skips them with the install
command; in CI (``CI`` set) a missing Prometheus is a failure, never a silent skip.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from ..daemon.helpers import ADMIN, bearer, free_port, request, signed, solve_body, start_daemon

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
PROMTOOL = shutil.which("promtool")
PROMETHEUS = shutil.which("prometheus")


def _need(tool):
    if tool is None:
        msg = "Debian's prometheus package is needed: apt-get install -y prometheus"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)


def _promtool(*args):
    _need(PROMTOOL)
    res = subprocess.run([PROMTOOL, *args], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


TOKEN = "a-metrics-token"


def _installed(tmp_path) -> Path:
    """deploy/prometheus as installed: with the metrics token file beside the configs
    (promtool checks that the file they name exists)."""
    folder = tmp_path / "prometheus"
    shutil.copytree(DEPLOY / "prometheus", folder)
    (folder / "fairgrid-metrics-token").write_text(TOKEN + "\n")
    return folder


def test_promtool_checks_the_config_and_the_rules(tmp_path):
    folder = _installed(tmp_path)
    out = _promtool("check", "config", str(folder / "prometheus.yml"))
    assert "SUCCESS" in out
    _promtool("check", "config", str(folder / "compose-prometheus.yml"))
    _promtool("check", "rules", str(folder / "rules.yml"))
    # both configs send the token from that file
    import yaml
    for name in ("prometheus.yml", "compose-prometheus.yml"):
        job = next(j for j in yaml.safe_load((folder / name).read_text())["scrape_configs"]
                   if j["job_name"] == "fairgrid")
        assert job["authorization"] == {"type": "Bearer",
                                        "credentials_file": "fairgrid-metrics-token"}


@pytest.fixture
def metered(tmp_path):
    """A daemon whose /metrics needs the token in metrics.token_file."""
    token = tmp_path / "metrics-token"
    token.write_text(TOKEN + "\n")
    yield from start_daemon(tmp_path, f'[metrics]\ntoken_file = "{token}"\n')


def test_promtool_unit_tests_cover_every_alert():
    import yaml
    rules = yaml.safe_load((DEPLOY / "prometheus" / "rules.yml").read_text())
    alerts = {r["alert"]: r for g in rules["groups"] for r in g["rules"] if "alert" in r}
    for name, rule in alerts.items():
        assert rule.get("for"), name
        assert rule["labels"].get("severity") in {"critical", "warning"}, name
        assert rule["annotations"].get("summary") and rule["annotations"].get("description")
    files = [DEPLOY / "prometheus" / name for name in ("rules_test.yml", "rules_test_days.yml")]
    firing, quiet = set(), set()
    for path in files:
        for t in yaml.safe_load(path.read_text())["tests"]:
            for case in t.get("alert_rule_test", []):
                (firing if case["exp_alerts"] else quiet).add(case["alertname"])
    assert firing == set(alerts), "every alert needs a test where it fires"
    assert quiet == set(alerts), "every alert needs a test where it stays quiet"
    runbook = (ROOT / "docs" / "operations.md").read_text()
    for name in alerts:
        assert f"### {name}" in runbook, f"docs/operations.md has no runbook entry for {name}"
    _promtool("test", "rules", *map(str, files))


def _metric_names_in(expr: str) -> set[str]:
    names = set(re.findall(r"\b(fairgrid_[a-z_]+)\b", expr))
    return {re.sub(r"_(bucket|count|sum)$", "", n) for n in names}


def _exported(base: str) -> set[str]:
    with urllib.request.urlopen(base + "/metrics", timeout=10) as resp:
        text = resp.read().decode()
    return {m.group(1) for m in re.finditer(r"^# TYPE (\S+) ", text, re.M)}


def test_dashboard_is_well_formed():
    dash = json.loads((DEPLOY / "grafana" / "fairgrid.json").read_text())
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids)) and len(ids) >= 10
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    for panel in dash["panels"]:
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["datasource"]["uid"] == "${datasource}"
            assert target["expr"].strip()
        pos = panel["gridPos"]
        assert pos["x"] + pos["w"] <= 24


def test_every_metric_in_the_dashboard_and_rules_is_exported(daemon):  # noqa: F811
    _proc, base, _db, _tmp = daemon
    exported = _exported(base)
    dash = json.loads((DEPLOY / "grafana" / "fairgrid.json").read_text())
    used = set()
    for panel in dash["panels"]:
        for target in panel["targets"]:
            used |= _metric_names_in(target["expr"])
    used |= _metric_names_in((DEPLOY / "prometheus" / "rules.yml").read_text())
    # exposition names of counters drop the _total suffix in "# TYPE" lines
    exported |= {n + "_total" for n in exported}
    assert used, "no fairgrid metrics found in the dashboard"
    missing = sorted(used - exported)
    assert not missing, f"dashboard/rules use metrics the daemon does not export: {missing}"


def _query(prom: str, q: str):
    url = prom + "/api/v1/query?" + urllib.parse.urlencode({"query": q})
    with urllib.request.urlopen(url, timeout=10) as resp:
        doc = json.loads(resp.read())
    assert doc["status"] == "success", doc
    return doc["data"]["result"]


def test_a_real_prometheus_sees_the_traffic(metered, tmp_path):
    _need(PROMETHEUS)
    _proc, base, _db, _tmp = metered
    # /metrics is the token's only: the shipped config must carry it for Prometheus to see
    assert request(base + "/metrics")[0] == 401
    assert request(base + "/metrics", headers=bearer("org"))[0] == 401
    # a nightly run, for the job metrics the stale-job alert reads
    status, doc = request(base + "/v1/nightly-runs", b"{}",
                          {**bearer(ADMIN), "content-type": "application/json"})
    assert status == 202, doc
    deadline = time.monotonic() + 120
    while request(base + f"/v1/nightly-runs/{doc['run_id']}", headers=bearer(ADMIN))[1][
            "status"] in ("running", "queued"):
        assert time.monotonic() < deadline, "the nightly run did not end"
        time.sleep(0.5)
    port = free_port()
    target = base.removeprefix("http://")
    cfg = _installed(tmp_path) / "prometheus.yml"
    cfg.write_text((DEPLOY / "prometheus" / "prometheus.yml").read_text()
                   .replace("127.0.0.1:8080", target)
                   .replace("scrape_interval: 15s", "scrape_interval: 1s")
                   .replace("evaluation_interval: 15s", "evaluation_interval: 1s"))
    prom = subprocess.Popen(
        [PROMETHEUS, f"--config.file={cfg}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    prom_url = f"http://127.0.0.1:{port}"
    try:
        sent = 6
        for i in range(sent):
            raw, headers = signed(solve_body(submission_id=f"s-{i}"), msg_id=f"m-{i}")
            assert request(base + "/v1/webhooks/solves", raw, headers)[0] == 202
        raw, headers = signed(solve_body(submission_id="s-bad"), secret="whsec_" + "A" * 32)
        assert request(base + "/v1/webhooks/solves", raw, headers)[0] == 401
        deadline = time.monotonic() + 90
        seen = {}
        while time.monotonic() < deadline:
            try:
                accepted = _query(prom_url, 'sum(fairgrid_webhook_requests_total{outcome="accepted"})')
                latency = _query(prom_url, "sum(fairgrid_ingest_latency_seconds_count)")
                codes = _query(prom_url, 'sum by (code) (fairgrid_http_responses_total{route="/v1/webhooks/solves"})')
                failures = _query(prom_url, "sum(fairgrid_webhook_signature_failures_total)")
                up = _query(prom_url, 'up{job="fairgrid"}')
                # the stale-job alert's own selector finds the series as stored: a label
                # named job would be renamed exported_job, and the alert never fire
                nightly = _query(prom_url, re.search(
                    r"fairgrid_job_last_success_timestamp_seconds\{[^}]*\}",
                    (DEPLOY / "prometheus" / "rules.yml").read_text()).group(0))
                seen = {"accepted": accepted, "latency": latency, "codes": codes,
                        "failures": failures, "up": up, "nightly": nightly}
                if (nightly and accepted and float(accepted[0]["value"][1]) == sent
                        and latency and float(latency[0]["value"][1]) == sent
                        and failures and float(failures[0]["value"][1]) == 1):
                    break
            except (OSError, AssertionError):
                pass
            if prom.poll() is not None:
                pytest.fail(f"prometheus exited: {prom.stderr.read()[-2000:]}")
            time.sleep(0.5)
        else:
            pytest.fail(f"Prometheus never showed the traffic: {seen}")
        codes = {r["metric"]["code"]: float(r["value"][1]) for r in seen["codes"]}
        assert codes == {"202": sent, "401": 1}
        assert float(seen["up"][0]["value"][1]) == 1
        # the rules loaded and evaluate without errors
        with urllib.request.urlopen(prom_url + "/api/v1/rules", timeout=10) as resp:
            groups = json.loads(resp.read())["data"]["groups"]
        rules = [r for g in groups for r in g["rules"]]
        assert len(rules) >= 15
        deadline = time.monotonic() + 30
        while any(r.get("health") != "ok" for r in rules) and time.monotonic() < deadline:
            time.sleep(1)
            with urllib.request.urlopen(prom_url + "/api/v1/rules", timeout=10) as resp:
                rules = [r for g in json.loads(resp.read())["data"]["groups"]
                         for r in g["rules"]]
        bad = [(r["name"], r.get("lastError")) for r in rules if r.get("health") != "ok"]
        assert not bad, bad
    finally:
        prom.terminate()
        try:
            prom.wait(timeout=20)
        except subprocess.TimeoutExpired:
            prom.kill()
