"""`fairgrid export` through the daemon refuses an answer cut short.

When the connection ends before the Content-Length the daemon announced (a daemon that
restarted mid-export, a proxy that timed the download out), the command fails with one
line and writes none of the files (docs/operations.md, "Export": a failure while writing
leaves none of them). A stand-in daemon sends the real route's headers, then a third of
the CSV, then closes the connection.
"""

from __future__ import annotations

import http.server
import json
import threading

from fairgrid.daemon.cli import main as cli_main

HEAD = b"portal,submission_id,tournament_id,player_id,puzzle_id,started_at\n"
ROW = b"demo,s-%d,cup,p-%d,easy,2026-11-21 10:00:00+00\n"
ROWS = 2000


class _CutShort(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == "/healthz":
            body = json.dumps({"status": "alive"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        whole = HEAD + b"".join(ROW % (k, k) for k in range(ROWS))
        self.send_response(200)
        self.send_header("Content-Type", "text/csv")
        self.send_header("X-Fairgrid-Rows", str(ROWS))
        self.send_header("Content-Length", str(len(whole)))
        self.end_headers()
        self.wfile.write(whole[: len(whole) // 3])  # a third, then the connection ends
        self.wfile.flush()
        self.close_connection = True


def test_an_export_download_cut_short_fails_and_writes_nothing(tmp_path, capsys):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _CutShort)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        out = tmp_path / "out"
        rc = cli_main(["export", "--tournament", "cup", "--out", str(out), "--url",
                       f"http://127.0.0.1:{server.server_address[1]}", "--token", "adm"])
    finally:
        server.shutdown()
        server.server_close()
    written = sorted(p.name for p in out.glob("*.csv")) if out.exists() else []
    printed = capsys.readouterr()
    # the fault: exit 0, four files each a third of what the daemon said it sent,
    # and "2000 rows" printed for each
    assert rc == 2 and written == [], (
        f"exit {rc}; files written from answers cut short: {written}; "
        f"stdout: {printed.out.strip()!r}")
