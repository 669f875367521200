// A portal's side of fairgrid, in Node: a signing relay and a notification receiver.
//
// The page records the solve (portal/recorder) and POSTs {puzzle_id, log} to /solves;
// this server, which knows who is signed in, adds who solved which puzzle in which
// tournament and the solve's id, signs the webhook with the portal's whsec_ secret (the
// browser never sees it) and delivers it,
// retrying what fairgrid asks to be retried. fairgrid's notifications arrive at
// /fairgrid/events and are taken only with a valid signature.
//
//   FAIRGRID_URL=http://127.0.0.1:8080 FAIRGRID_PORTAL=demo FAIRGRID_SECRET=whsec_... \
//   FAIRGRID_NOTIFY_SECRET=whsec_... node relay.mjs --port 8090
//
// Needs npm's standardwebhooks (npm ci); fetch and http come with Node 20.
import { createServer } from "node:http";
import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Webhook } from "standardwebhooks";

/** Whether an answer is worth another try: any 5xx (fairgrid's, or a proxy's or a
 * CDN's in front of it: 507, 520-524) and 429. */
export function retryable(status) {
  return status >= 500 || status === 429;
}

/** Seconds a Retry-After header asks for (a number, or an HTTP date); null without one. */
export function retryAfterS(value) {
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const when = Date.parse(value);
  return Number.isNaN(when) ? null : Math.max(0, (when - Date.now()) / 1000);
}

/**
 * The solve's id, made here from who solved which puzzle when they started: a page that
 * posts the same solve again (its answer lost) makes the same id, which fairgrid stores
 * once, and no page can choose an id another player's solve would need. The same as the
 * Python relay's submission_id_of.
 */
export function submissionIdOf(playerId, puzzleId, startedAt) {
  const key = [playerId, puzzleId, startedAt].join("\0");
  return "s-" + createHash("sha256").update(key, "utf8").digest("hex").slice(0, 32);
}

/** The solve webhook: who and what from the server; only the log's three fields from the page. */
export function webhookBody({ portal, submissionId, playerId, puzzleId, log, tournamentId }) {
  const body = { type: "solve.completed", portal, submission_id: submissionId,
                 player_id: playerId, puzzle: { id: puzzleId },
                 started_at: log.started_at, moves: log.moves };
  if (log.client !== undefined) body.client = log.client;
  if (tournamentId) body.tournament_id = tournamentId;
  return body;
}

/**
 * POST a signed solve to fairgrid: {status, answer}. One webhook-id for every attempt, so
 * fairgrid stores it once; a fresh signature each time. 5xx and 429 are retried after
 * Retry-After when given, else after a jittered exponential backoff; network errors too.
 * Any other answer is final (a 4xx's JSON body names the field).
 */
export async function deliver(url, secret, body, { attempts = 6, baseS = 0.5, capS = 30 } = {}) {
  const raw = JSON.stringify(body);
  const msgId = `solve-${body.submission_id}`;
  const webhook = secret instanceof Webhook ? secret : new Webhook(secret.trim());
  for (let attempt = 0; ; attempt++) {
    const now = new Date();
    let wait = null;
    try {
      const resp = await fetch(url.replace(/\/$/, "") + "/v1/webhooks/solves", {
        method: "POST", body: raw, redirect: "manual",
        headers: { "webhook-id": msgId, "webhook-timestamp": String(Math.floor(now / 1000)),
                   "webhook-signature": webhook.sign(msgId, now, raw),
                   "content-type": "application/json" } });
      // a body that is no JSON object (a proxy's HTML page): an error saying so; the
      // status still decides whether to retry
      let answer = await resp.json().catch(() => null);
      if (answer === null || typeof answer !== "object" || Array.isArray(answer)) {
        answer = { error: `an answer ${resp.status} with no JSON object in it (a proxy's?)` };
      }
      if (!retryable(resp.status) || attempt === attempts - 1) {
        return { status: resp.status, answer };
      }
      // a gateway's "an hour" would hold the page's request as long: at most the cap
      const asked = retryAfterS(resp.headers.get("retry-after"));
      wait = asked === null ? null : Math.min(capS, asked);
    } catch (error) {
      if (attempt === attempts - 1) throw error;
    }
    wait ??= Math.min(capS, baseS * 2 ** attempt) * (0.5 + Math.random() / 2);
    await sleep(wait * 1000);
  }
}

/** Who is signed in. Replace with your session lookup: never trust the page for it. */
export function playerOf(request) {
  return request.headers["x-player"] ?? "anonymous";
}

/** Which tournament the puzzle is played in, or null. Replace with your own lookup: the
 * page must not decide in which tournament its solve is judged. */
export function tournamentOf(request, puzzleId) {
  return null;
}

const SEEN_EVENTS = 10_000;  // event ids remembered

// the most of a body read: fairgrid takes 1 MiB a webhook (server.max_body_bytes)
const MAX_BODY_BYTES = 1 << 20;

class TooLarge extends Error {}

async function readBody(request, limit = MAX_BODY_BYTES) {
  const chunks = [];
  let size = 0;
  for await (const chunk of request) {
    size += chunk.length;
    if (size > limit) throw new TooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function send(response, status, value) {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(value === undefined ? "" : JSON.stringify(value));
}

export function makeServer({ fairgridUrl, portal, secret, notifySecret, player = playerOf,
                             tournament = tournamentOf, onEvent = () => {} }) {
  // made once: a secret that is no secret fails here, at the start, not at every
  // request; a secret read from a file ends in a new line, which is not part of it
  const signer = new Webhook(String(secret ?? "").trim());
  const verifier = notifySecret ? new Webhook(String(notifySecret).trim()) : null;
  async function solve(request, response) {
    const raw = await readBody(request);
    let page;
    try {
      page = JSON.parse(raw.toString("utf8"));
      if (typeof page.puzzle_id !== "string" || !page.log
          || typeof page.log.started_at !== "string" || !("moves" in page.log)) {
        throw new Error("incomplete");
      }
    } catch {
      return send(response, 400,
                  { error: "expected {puzzle_id, log: {started_at, moves, client}}" });
    }
    const playerId = player(request);
    const submissionId = submissionIdOf(playerId, page.puzzle_id, page.log.started_at);
    const body = webhookBody({ portal, submissionId, playerId, puzzleId: page.puzzle_id,
                               log: page.log, tournamentId: tournament(request, page.puzzle_id) });
    try {
      const { status, answer } = await deliver(fairgridUrl, signer, body);
      return send(response, status < 300 ? 200 : 502,
                  { submission_id: submissionId, status, fairgrid: answer });
    } catch {
      return send(response, 502, { error: "fairgrid unreachable" });
    }
  }

  const seen = new Set();  // event ids taken (keep them in your database to survive restarts)
  const taking = new Map();  // event id -> a promise settled once its handling is over

  async function event(request, response) {
    const raw = await readBody(request);
    let payload;
    try {
      payload = verifier.verify(raw.toString("utf8"), request.headers);
    } catch {
      return send(response, 401, { error: "bad signature" });
    }
    // at least once: a retry (or a replay within the signature's five minutes) of an event
    // already taken is acknowledged, not handled twice. A copy arriving while the first is
    // handled waits for it: acknowledged once that one is taken, handled itself if that
    // one failed (acknowledged at once, it would have lost the event)
    const id = request.headers["webhook-id"] ?? "";
    while (taking.has(id)) await taking.get(id);
    if (!seen.has(id)) {
      let done;
      taking.set(id, new Promise((resolve) => { done = resolve; }));
      try {
        await onEvent(payload);
        seen.add(id);
        if (seen.size > SEEN_EVENTS) seen.delete(seen.values().next().value);
      } finally {
        taking.delete(id);
        done();
      }
    }
    response.writeHead(204);
    return response.end();
  }

  return createServer(async (request, response) => {
    // the route first: a body is read only for a route that takes one
    const route = request.method !== "POST" ? null
      : request.url === "/solves" ? solve
      : request.url === "/fairgrid/events" && notifySecret ? event : null;
    try {
      if (route === null) {
        response.setHeader("connection", "close");  // an unread body is not waited for
        return send(response, 404, { error: "not found" });
      }
      await route(request, response);
    } catch (error) {
      // a body over the limit, a client gone mid-body, a failing onEvent: one request's
      // failure, never the relay's (Node ends the process on an unhandled rejection)
      // (a request read to its end is destroyed too: the socket says if the client went)
      const gone = response.socket?.destroyed !== false;
      if (response.headersSent || gone && !(error instanceof TooLarge)) {
        response.destroy();
      } else if (error instanceof TooLarge) {
        response.setHeader("connection", "close");
        send(response, 413, { error: `the body is over ${MAX_BODY_BYTES} bytes` });
      } else {
        send(response, 500, { error: "the relay failed" });
      }
    }
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf("--port");
  const port = at > 0 ? Number(process.argv[at + 1]) : 8090;
  const server = makeServer({
    fairgridUrl: process.env.FAIRGRID_URL, portal: process.env.FAIRGRID_PORTAL,
    secret: process.env.FAIRGRID_SECRET, notifySecret: process.env.FAIRGRID_NOTIFY_SECRET,
    onEvent: (event) => console.log(JSON.stringify(event)),
  });
  server.listen(port, "127.0.0.1", () => console.log(`relay listening on ${server.address().port}`));
}
