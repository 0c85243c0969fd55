#!/usr/bin/env python3
"""A minimal composing host for CGP, in Python with the standard library only.

It speaks the ctxkit composition protocol (docs/conformance.md): it reads one
scenario as JSON on stdin, starts each provider with the command it is given,
talks CGP to it over stdio, composes the replies under the query's token
budget, and prints {"admitted": [...], "dropped": [...]} on stdout.

Try it:

    ctxkit conform composition --exec python3 examples/composing-host/host.py

What it does, in order:

1. Fan-out: every provider gets a handshake (the version family must be
   "contextgraph/1") and the scenario's query; each runs in its own thread,
   and a provider that fails, hangs or crashes contributes nothing.
2. Per-provider audit: a reply whose declared token costs sum past max_tokens
   (B2) or that holds more than max_frames frames (B4) is quarantined whole.
   Each remaining frame must be valid: score in [0, 1] (F1), a title (F2), a
   citation label (F3), and an honest token_cost (B3).
3. Dedup: frames with the same content_digest are one piece of evidence; the
   higher score wins, a tie goes to the smaller (provider, id). The loser is
   reported dropped.
4. Rank by score (high first), ties by (provider, id, digest) — never by
   arrival order, so the result depends only on the set of frames.
5. Pack first-fit by each frame's content cost, ceil(utf8 bytes / 4): a
   frame that does not fit is reported dropped and packing continues.
"""

import json
import subprocess
import sys
import threading
import time

PROTOCOL_VERSION = "contextgraph/1.0-draft"
REPLY_TIMEOUT_SECONDS = 10


def budget_tokens(text):
    """CGP budget tokens: ceil(UTF-8 bytes / 4)."""
    return (len(text.encode("utf-8")) + 3) // 4


def family(version):
    return version.split(".", 1)[0]


class Provider:
    """One CGP provider spoken to over stdio, one JSON envelope per line."""

    def __init__(self, provider_id, command):
        self.id = provider_id
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
        )

    def send(self, envelope):
        self.proc.stdin.write(json.dumps(envelope, separators=(",", ":")) + "\n")
        self.proc.stdin.flush()

    def receive(self):
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("provider %s closed its output" % self.id)
        return json.loads(line)

    def query(self, query):
        self.send({"type": "handshake", "protocol_version": PROTOCOL_VERSION})
        ack = self.receive()
        if ack.get("type") != "handshake_ack":
            raise RuntimeError("provider %s answered the handshake with %r" % (self.id, ack.get("type")))
        if family(ack.get("protocol_version", "")) != family(PROTOCOL_VERSION):
            raise RuntimeError("provider %s speaks %r" % (self.id, ack.get("protocol_version")))
        self.send({"type": "query", "query": query})
        reply = self.receive()
        if reply.get("type") != "frames":
            raise RuntimeError("provider %s answered the query with %r" % (self.id, reply.get("type")))
        return reply["result"].get("frames") or []

    def close(self):
        try:
            self.send({"type": "shutdown"})
            self.proc.stdin.close()
            self.proc.wait(timeout=2)
        except Exception:
            self.proc.kill()
            self.proc.wait()


def fan_out(providers, query):
    """Query every provider concurrently; return {provider id: frames or None}."""
    replies = {}

    def leg(spec):
        provider = None
        try:
            provider = Provider(spec["id"], spec["command"])
            replies[spec["id"]] = provider.query(query)
        except Exception as err:  # one leg's failure never affects another
            print("provider %s failed: %s" % (spec["id"], err), file=sys.stderr)
            replies[spec["id"]] = None
        finally:
            if provider is not None:
                provider.close()

    threads = [threading.Thread(target=leg, args=(spec,), daemon=True) for spec in providers]
    for t in threads:
        t.start()
    deadline = time.monotonic() + REPLY_TIMEOUT_SECONDS
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    # A leg still running after the deadline contributes nothing.
    return {pid: replies.get(pid) for pid in [spec["id"] for spec in providers]}


def leg_is_honest(frames, query):
    """The per-provider audit: B2 (declared budget) and B4 (frame count)."""
    declared = sum(int(f.get("token_cost", 0)) for f in frames)
    return declared <= query["max_tokens"] and len(frames) <= query["max_frames"]


def frame_is_valid(f):
    """Per-frame rules: F1 score range, F2 title, F3 citation label, B3 cost."""
    score = f.get("score")
    if not isinstance(score, (int, float)) or not 0 <= score <= 1:
        return False
    if not str(f.get("title") or "").strip():
        return False
    if not str(f.get("citation_label") or "").strip():
        return False
    return f.get("token_cost") == budget_tokens(f.get("content") or "")


def audit(replies, providers, query):
    """Accepted (provider, frame) offers, in registration order."""
    offers = []
    for spec in providers:
        frames = replies.get(spec["id"])
        if frames is None or not leg_is_honest(frames, query):
            continue  # quarantined: nothing from this provider reaches the prompt
        offers.extend((spec["id"], f) for f in frames if frame_is_valid(f))
    return offers


def identity(offer):
    provider, f = offer
    digest = f.get("content_digest")
    # An absent digest sorts before any digest.
    return (provider.encode(), f["id"].encode(), digest is not None, (digest or "").encode())


def rank_key(offer):
    return (-float(offer[1]["score"]), identity(offer))


def compose(offers, budget):
    """Dedup, rank and pack; return (admitted, dropped) as [provider, id] pairs."""
    dropped = []
    kept = {}
    for offer in sorted(offers, key=rank_key):
        digest = offer[1].get("content_digest")
        if digest and digest in kept:
            dropped.append(offer)  # same evidence; the better-ranked copy is kept
            continue
        kept[digest or ("", identity(offer))] = offer
    admitted = []
    remaining = budget
    for offer in sorted(kept.values(), key=rank_key):
        cost = budget_tokens(offer[1].get("content") or "")
        if cost <= remaining:
            admitted.append(offer)
            remaining -= cost
        else:
            dropped.append(offer)
    pair = lambda offer: [offer[0], offer[1]["id"]]
    return [pair(o) for o in admitted], [pair(o) for o in dropped]


def main():
    scenario = json.load(sys.stdin)
    query = scenario["query"]
    providers = scenario["providers"]
    replies = fan_out(providers, query)
    offers = audit(replies, providers, query)
    admitted, dropped = compose(offers, query["max_tokens"])
    json.dump({"admitted": admitted, "dropped": dropped}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
