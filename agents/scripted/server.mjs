#!/usr/bin/env node
// Scripted model servers for the real-agent tests (README.md): one HTTP
// server on 127.0.0.1 that answers as the Anthropic Messages API, the
// OpenAI Responses API and Gemini's API, each with the same scripted task
// (brain.mjs). Usage: node scripted/server.mjs LOG_FILE
// It prints "listening http://127.0.0.1:PORT" once it listens, and appends
// one JSON line per model request to LOG_FILE: what the model was shown and
// what it answered. Every handler answers at once, so requests never
// interleave.

import fs from "node:fs";
import http from "node:http";
import * as anthropic from "./anthropic.mjs";
import * as openai from "./openai.mjs";
import * as gemini from "./gemini.mjs";

const logFile = process.argv[2];
// With SCRIPTED_LOG_BODIES set, each line also holds the request's body,
// to see what an agent sends.
// With SCRIPTED_DELAY_MS set, each turn request (a Messages, Responses or
// streamGenerateContent call) is answered that many milliseconds late, as a
// model takes time to answer; each line's "ms" is the time the request
// spent in this server.
const delay = Number(process.env.SCRIPTED_DELAY_MS || 0);
let current = null;
let started = 0;
const log = (entry) => {
  const body = process.env.SCRIPTED_LOG_BODIES && current ? { body: current } : {};
  const ms = Date.now() - started;
  if (logFile) fs.appendFileSync(logFile, JSON.stringify({ at: new Date().toISOString(), ms, ...entry, ...body }) + "\n");
};
const isTurn = (path) => path === "/v1/messages" || path === "/v1/responses" || path.endsWith(":streamGenerateContent");

const routes = { ...anthropic.routes(log), ...openai.routes(log), ...gemini.routes(log) };
// Both answer GET /v1/models; Claude Code sends anthropic-version.
routes["GET /v1/models"] = (req, body, res) =>
  (req.headers["anthropic-version"] ? anthropic : openai).routes(log)["GET /v1/models"](req, body, res);

// Claude Code (the one claude-agent-acp runs) opens a connection early
// with HEAD on its base URL.
routes["HEAD /"] = (req, body, res) => {
  res.writeHead(200);
  res.end();
};

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const path = req.url.split("?")[0];
    const start = Date.now();
    if (delay > 0 && isTurn(path)) setTimeout(() => answer(req, res, chunks, path, start), delay);
    else answer(req, res, chunks, path, start);
  });
});

function answer(req, res, chunks, path, start) {
  let body = {};
  const raw = Buffer.concat(chunks).toString("utf8");
  try {
    body = raw ? JSON.parse(raw) : {};
  } catch {
    body = { raw };
  }
  const route = routes[`${req.method} ${path}`] || matchRoute(req.method, path);
  if (!route) {
    log({ api: "unknown", method: req.method, path: req.url, agent: req.headers["user-agent"] });
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: `The scripted model server does not serve ${req.method} ${path}.` } }));
    return;
  }
  try {
    current = body;
    started = start;
    route(req, body, res, path);
  } catch (err) {
    log({ api: "error", path: req.url, error: String(err && err.stack) });
    res.writeHead(500);
    res.end(String(err));
  }
}

function matchRoute(method, path) {
  for (const [key, fn] of Object.entries(routes)) {
    const [m, p] = key.split(" ");
    if (m === method && p.endsWith("*") && path.startsWith(p.slice(0, -1))) return fn;
  }
  return null;
}

server.listen(0, "127.0.0.1", () => {
  console.log(`listening http://127.0.0.1:${server.address().port}`);
});
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => process.exit(0));
