#!/usr/bin/env node
// Compares the committed package-lock.json with the one `npm install` left behind, by
// meaning. Exit 0 when they lock the same install: every package present in both has the
// same version, resolved address and integrity, and every entry present in only one is an
// optional package that npm did not install here (another platform's binary, or a
// dependency nested under one). Anything else is drift: exit 1 with the differences listed.
// Usage: node scripts/lock-drift.cjs <committed-lock> <lock-after-install>
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const [committedPath, installedPath] = process.argv.slice(2);
if (!committedPath || !installedPath) {
  console.error("usage: lock-drift.cjs <committed-lock> <lock-after-install>");
  process.exit(2);
}
const root = path.dirname(path.resolve(installedPath));
const read = (p) => JSON.parse(fs.readFileSync(p, "utf8")).packages ?? {};
const before = read(committedPath);
const after = read(installedPath);

const problems = [];
for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
  const a = before[key];
  const b = after[key];
  if (a && b) {
    for (const field of ["version", "resolved", "integrity"]) {
      if (a[field] !== b[field]) {
        problems.push(`${key || "(root)"}: ${field} ${a[field]} -> ${b[field]}`);
      }
    }
    continue;
  }
  const entry = a ?? b;
  const installedHere = key !== "" && fs.existsSync(path.join(root, key));
  if (!entry.optional || installedHere) {
    problems.push(`${key}: ${a ? "dropped" : "added"} by npm install`);
  }
}
if (problems.length > 0) {
  for (const p of problems) console.error(`lock drift: ${p}`);
  process.exit(1);
}
