"""Prometheus metrics on a registry passed in (tests build a fresh one each).

Names follow Prometheus conventions: ``fairgrid_`` prefix, ``_total`` counters,
``_seconds`` durations; labels have few values (never a player or puzzle id). Values that
live in the database (puzzles by status) come from a collector at scrape time.
"""

from __future__ import annotations

from typing import Callable

from prometheus_client import (CollectorRegistry, Counter, Gauge, Histogram,
                               disable_created_metrics)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from .states import FLAG_STATES

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
ANALYSIS_BUCKETS = (0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


class Metrics:
    """Every metric the daemon exports."""

    def __init__(self, registry: CollectorRegistry):
        # the _created series double every counter and histogram and nothing reads them
        disable_created_metrics()
        self.registry = registry
        self.webhook_requests = Counter(
            "fairgrid_webhook_requests_total", "Solve webhooks by portal and outcome.",
            ["portal", "outcome"], registry=registry)
        self.http_responses = Counter(
            "fairgrid_http_responses_total", "HTTP responses by route template and status code.",
            ["route", "code"], registry=registry)
        self.signature_failures = Counter(
            "fairgrid_webhook_signature_failures_total",
            "Webhooks rejected before any portal was identified, by reason.", ["reason"],
            registry=registry)
        self.duplicates = Counter(
            "fairgrid_webhook_duplicates_total", "Webhooks answered as duplicates.",
            ["portal"], registry=registry)
        self.clock_ahead = Counter(
            "fairgrid_webhook_clock_ahead_total",
            "Solves whose log ended after its receipt (beyond webhooks.time_skew_s): started_at "
            "taken as the receipt less the log's duration.", ["portal"], registry=registry)
        self.ingest_latency = Histogram(
            "fairgrid_ingest_latency_seconds", "Receipt of a webhook to its commit.",
            buckets=LATENCY_BUCKETS, registry=registry)
        self.batch_size = Histogram(
            "fairgrid_write_batch_size", "Submissions committed per transaction.",
            buckets=BATCH_BUCKETS, registry=registry)
        self.queue_depth = Gauge(
            "fairgrid_write_queue_depth", "Submissions waiting for the writer.",
            registry=registry)
        self.analysis_duration = Histogram(
            "fairgrid_analysis_duration_seconds", "Puzzle analysis (uniqueness, SA order).",
            buckets=ANALYSIS_BUCKETS, registry=registry)
        self.analysis_queue_wait = Histogram(
            "fairgrid_analysis_queue_wait_seconds",
            "Time a puzzle waited for analysis to start (apart from the analysis itself).",
            buckets=ANALYSIS_BUCKETS, registry=registry)
        self.analysis_queue_depth = Gauge(
            "fairgrid_analysis_queue_depth", "Puzzles waiting for analysis.", registry=registry)
        self.scoring_backlog = Gauge(
            "fairgrid_scoring_backlog", "Stored submissions queued for scoring (scoring "
            "yields the CPU to ingestion, so this grows during a burst and drains after).",
            registry=registry)
        self.submissions_scored = Counter(
            "fairgrid_submissions_scored_total",
            "Submissions scored for the first time (re-scores are counted apart).",
            registry=registry)
        self.submissions_rescored = Counter(
            "fairgrid_submissions_rescored_total",
            "Scores replaced by a re-score (after a nightly run or an upgrade).",
            registry=registry)
        self.submissions_unscorable = Counter(
            "fairgrid_submissions_unscorable_total",
            "Submissions scoring failed on (status unscorable, the reason in the "
            "submission's score_error); each is counted once and not retried.",
            registry=registry)
        self.scoring_duration = Histogram(
            "fairgrid_scoring_duration_seconds", "Scoring one submission (read, score, write).",
            buckets=LATENCY_BUCKETS, registry=registry)
        self.anomaly = Histogram(
            "fairgrid_score_anomaly", "Anomaly score of scored submissions (-log10 p).",
            buckets=(0.5, 1, 2, 3, 4, 6, 8, 12, 20, 50), registry=registry)
        self.flags = Counter(
            "fairgrid_flags_total", "Flags raised, by reason.", ["reason"], registry=registry)
        # the job's name is the ``task`` label: a ``job`` label clashes with the one
        # Prometheus gives every scraped series, which would rename it exported_job
        self.job_duration = Gauge(
            "fairgrid_job_duration_seconds", "Duration of each job's last successful run.",
            ["task"], registry=registry)
        self.job_rows = Gauge(
            "fairgrid_job_rows", "Rows each job's last successful run handled, by what they are.",
            ["task", "what"], registry=registry)
        self.metric_correlation = Gauge(
            "fairgrid_metric_human_correlation",
            "Correlation of each difficulty metric with the median human solve time "
            "(live thesis Table 3.1, from the last nightly run).", ["metric", "coefficient"],
            registry=registry)
        self.job_last_success = Gauge(
            "fairgrid_job_last_success_timestamp_seconds",
            "Unix time of each job's last successful run.", ["task"], registry=registry)
        self.job_scheduled = Gauge(
            "fairgrid_job_scheduled",
            "1 where this daemon runs the job on a schedule (nightly.cron set), else 0.",
            ["task"], registry=registry)

        self.notify_attempts = Counter(
            "fairgrid_notification_attempts", "Delivery attempts of outgoing notifications, "
            "by outcome: delivered, retry (will be tried again), failed (given up).",
            ["outcome"], registry=registry)
        for outcome in ("delivered", "retry", "failed"):
            self.notify_attempts.labels(outcome)
        self.compute_up = Gauge(
            "fairgrid_compute_up", "Whether the compute cluster (compute.scheduler) takes "
            "puzzle analysis: 1 yes, 0 unreachable or refused (puzzles wait).",
            registry=registry)
        self.compute_up.set(1)
        self.notify_oldest = Gauge(
            "fairgrid_notifications_oldest_undelivered_seconds",
            "Age of the oldest notification not delivered yet (pending or failed); 0 when "
            "every one was delivered.", registry=registry)

    def watch_notifications(self, stats: Callable[[], dict]) -> None:
        """Notifications by delivery state, and the oldest undelivered one's age."""
        self.registry.register(_CountCollector(
            "fairgrid_notifications", "Outgoing notifications by delivery state.", "state",
            ("pending", "delivered", "failed"), stats))
        self.notify_oldest.set_function(lambda: stats().get("oldest_undelivered_s", 0.0))

    def watch_players_to_judge(self, count: Callable[[], int]) -> None:
        """Players whose scored solves wait for their season to be judged again."""
        gauge = Gauge("fairgrid_players_to_judge", "Players marked by scoring whose "
                      "season verdict waits to be judged again (player verdicts run "
                      "after scoring, in the background).", registry=self.registry)
        gauge.set_function(count)

    def watch_players(self, counts: Callable[[], dict[str, int]]) -> None:
        """Players whose season verdict is flagged and waits for a person."""
        gauge = Gauge("fairgrid_players_flagged", "Players whose season verdict is "
                      "flagged and waits for review (player verdicts).",
                      registry=self.registry)
        gauge.set_function(lambda: counts().get("flagged", 0))

    def watch_pool(self, renewed: Callable[[], int]) -> None:
        """How often the process pool was replaced after one of its processes died."""
        self.registry.register(_CounterCollector(
            "fairgrid_pool_renewals", "Times the analysis and scoring process pool was "
            "replaced since the start, because one of its processes died (the OOM killer, "
            "a crash): the work it held is tried again.", renewed))

    def watch_queue(self, depth: Callable[[], int]) -> None:
        self.queue_depth.set_function(depth)

    def watch_puzzles(self, counts: Callable[[], dict[str, int]]) -> None:
        self.registry.register(_CountCollector(
            "fairgrid_puzzles", "Registered puzzles by status.", "status",
            ("pending", "ready", "invalid"), counts))

    def watch_flags(self, counts: Callable[[], dict[str, int]]) -> None:
        """Flags by review state (the open ones are the reviewers' queue)."""
        self.registry.register(_CountCollector(
            "fairgrid_flag_states", "Flags by review state.", "state",
            FLAG_STATES, counts))


class _CountCollector:
    """A gauge ``name{label}`` of counts read from the database at scrape time, one
    series per known value (0 where the database has none)."""

    def __init__(self, name: str, doc: str, label: str, values: tuple[str, ...],
                 counts: Callable[[], dict[str, int]]):
        self._name, self._doc, self._label, self._values = name, doc, label, values
        self._counts = counts

    def _family(self) -> GaugeMetricFamily:
        return GaugeMetricFamily(self._name, self._doc, labels=[self._label])

    def describe(self):
        return [self._family()]

    def collect(self):
        family = self._family()
        try:
            counts = self._counts()
        except Exception:  # noqa: BLE001 - a scrape must not fail because the DB is busy
            return
        for value in self._values:
            family.add_metric([value], counts.get(value, 0))
        yield family


class _CounterCollector:
    """A counter ``name_total`` whose value a callable gives at scrape time (a count kept
    by code that has no metrics of its own)."""

    def __init__(self, name: str, doc: str, value: Callable[[], int]):
        self._name, self._doc, self._value = name, doc, value

    def describe(self):
        return [CounterMetricFamily(self._name, self._doc)]

    def collect(self):
        yield CounterMetricFamily(self._name, self._doc, value=self._value())
