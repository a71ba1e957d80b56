// The public REST API as the web client uses it: JSON bodies in the proto3 JSON mapping, a bearer token from a
// guest sign-in kept in localStorage, refreshed once on a 401, an idempotency key on every call that changes
// something, and the table's Server-Sent Events read with fetch (an EventSource cannot send the Authorization
// header). Nothing here knows the rules.

const STORE = "golf.play.credentials";

/** A refusal from the service: `status` (HTTP), `reason` (the Error's typed reason) and a readable `message`. */
export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.message) || `HTTP ${status}`);
    this.status = status;
    this.reason = (body && body.reason) || "";
    this.body = body;
  }
}

function saved() {
  try {
    return JSON.parse(localStorage.getItem(STORE) || "null");
  } catch {
    return null;
  }
}

let session = saved();
const listeners = new Set();

/** The signed-in player ({id, displayName}) or null. */
export function player() {
  return session ? session.player : null;
}

/** Call `fn(player)` whenever the signed-in player changes. */
export function onPlayer(fn) {
  listeners.add(fn);
}

function keep(next) {
  session = next;
  if (next) localStorage.setItem(STORE, JSON.stringify(next));
  else localStorage.removeItem(STORE);
  for (const fn of listeners) fn(player());
}

/** A fresh idempotency key: a retry of the same intent sends the same one, so the server stores it once. */
export function newKey() {
  return crypto.randomUUID();
}

/** @typedef {{auth?: boolean, signal?: AbortSignal}} CallOptions */

/** @param {string} method @param {string} path @param {unknown} body @param {CallOptions} [options] */
async function send(method, path, body, { auth = true, signal } = {}) {
  const headers = { accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (auth && session) headers.authorization = `Bearer ${session.accessToken}`;
  return fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
}

async function parse(response) {
  const text = await response.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    body = { message: text };
  }
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

/** Trade the refresh token for a new access token; false (and signed out) when it is no longer good. */
async function refresh() {
  if (!session || !session.refreshToken) return false;
  const response = await send("POST", "/v1/tokens:refresh", { refreshToken: session.refreshToken }, { auth: false });
  if (!response.ok) {
    keep(null);
    return false;
  }
  const body = await response.json();
  keep({ ...session, player: body.player, accessToken: body.credentials.accessToken });
  return true;
}

/**
 * Call the API: `method` and `path` of the REST route, `body` for POST. Retries once after refreshing on 401.
 * @param {string} method @param {string} path @param {unknown} body @param {CallOptions} [options]
 * @returns {Promise<any>} the response's JSON body
 */
export async function call(method, path, body, options = {}) {
  let response = await send(method, path, body, options);
  if (response.status === 401 && options.auth !== false && (await refresh())) {
    response = await send(method, path, body, options);
  }
  return parse(response);
}

/** @param {string} path @param {CallOptions} [options] */
export const get = (path, options) => call("GET", path, undefined, options);
/** @param {string} path @param {unknown} [body] @param {CallOptions} [options] */
export const post = (path, body = {}, options) => call("POST", path, body, options);

/** Sign in as a new guest (an optional display name) and keep the credentials on this device. */
export async function signInAsGuest(displayName) {
  const body = await call("POST", "/v1/players:guest", displayName ? { displayName } : {}, { auth: false });
  keep({
    player: body.player,
    accessToken: body.credentials.accessToken,
    refreshToken: body.credentials.refreshToken,
  });
  return body.player;
}

/** Forget this device's player, revoking the refresh token on the server. */
export async function signOut() {
  if (session && session.refreshToken) {
    try {
      await call("POST", "/v1/tokens:revoke", { refreshToken: session.refreshToken }, { auth: false });
    } catch {
      // Signed out here either way; the token expires on its own.
    }
  }
  keep(null);
}

/** The query string of `params`, leaving out empty values. */
export function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

/**
 * Watch a table's events over Server-Sent Events. `onEvent(event)` gets each TableEvent (its `table` is the table
 * as this player sees it right after the event); `onState(state)` gets "live", "reconnecting" or "closed", and
 * `onError(error)` a refusal (an ApiError: the table is gone, or not this player's to watch), which ends the watch.
 * A dropped stream (network loss, server restart, a silence longer than two heartbeats, the browser going offline)
 * is opened again after the last event received (`afterSeq`), so no event is missed or repeated. Returns
 * `{ close(), drop() }`: `drop` cuts the connection as a network loss would (it then reconnects).
 */
export function watchTable(tableId, { afterSeq, joinCode, onEvent, onState, onError, silenceMs = 40_000 }) {
  let last = afterSeq;
  let closed = false;
  let controller = null;
  let retry = 0;
  let timer = null;
  let wake = null;

  const state = (s) => onState && onState(s);

  function arm() {
    clearTimeout(timer);
    timer = setTimeout(() => controller && controller.abort(), silenceMs);
  }

  async function open() {
    while (!closed) {
      controller = new AbortController();
      try {
        const path = `/v1/tables/${encodeURIComponent(tableId)}/events${query({ afterSeq: last, joinCode })}`;
        let response = await send("GET", path, undefined, { signal: controller.signal });
        if (response.status === 401 && (await refresh())) {
          response = await send("GET", path, undefined, { signal: controller.signal });
        }
        if (response.status === 204) break; // nothing will ever come: the table is over
        if (!response.ok) {
          const error = await parse(response).catch((e) => e);
          if (error.status >= 400 && error.status < 500 && error.status !== 429) throw error;
          throw new Error(`HTTP ${response.status}`);
        }
        state("live");
        retry = 0;
        arm();
        await read(response.body.getReader());
      } catch (error) {
        if (error instanceof ApiError && error.status !== 429) {
          closed = true;
          state("closed");
          throw error;
        }
      } finally {
        clearTimeout(timer);
      }
      if (closed) break;
      state("reconnecting");
      retry += 1;
      await new Promise((resolve) => {
        wake = resolve; // coming back online retries at once
        setTimeout(resolve, Math.min(250 * 2 ** retry, 5_000));
      });
      wake = null;
    }
    state("closed");
  }

  async function read(reader) {
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      arm();
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, "");
        dispatch(block);
      }
    }
  }

  function dispatch(block) {
    let name = "message";
    let data = "";
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith("event:")) name = line.slice(6).trim();
      else if (line.startsWith("data:")) data += line.slice(5).trim();
    }
    if (name !== "table" || !data) return; // heartbeats only keep the stream alive
    const event = JSON.parse(data);
    last = Number(event.seq);
    onEvent(event);
  }

  const offline = () => controller && controller.abort();
  const online = () => wake && wake();
  window.addEventListener("offline", offline);
  window.addEventListener("online", online);
  const done = open().catch((error) => onError && onError(error));
  return {
    done,
    drop() {
      if (controller) controller.abort();
    },
    close() {
      closed = true;
      window.removeEventListener("offline", offline);
      window.removeEventListener("online", online);
      if (wake) wake();
      if (controller) controller.abort();
    },
  };
}
