#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""A web page over the HF-PEP, loaded by a real browser, for tests and benchmarks.

write_site() generates a small multi-file site (HTML, a style sheet, a script, four
PNG images; deterministic from a seed); SITE_SERVER serves a directory over HTTP/1.1
(keep-alive, as web servers do); load_page() runs headless Chromium (Debian's
`chromium`) in a namespace of a test bed, through a proxy or none (the transparent
path), and drives it over the DevTools protocol on a pipe (--remote-debugging-pipe: no
port, nothing to reach across namespaces). The site's own script, run at the load
event, checks that the style sheet applied and every image decoded and writes so into
the page (element #hfstack-result); then REPORT, evaluated in the page, reads the
Navigation and Paint Timing entries and that text.

    site = write_site(directory)
    bed.serve("b", SITE_SERVER, FAR, "8080", directory)
    result = load_page(bed.command("a"), f"http://{FAR}:8080/", proxy="socks5://127.0.0.1:1080")
"""

import json
import logging
import os
import random
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

log = logging.getLogger(__name__)

CSS_COLOR = "rgb(12, 34, 56)"      # the style sheet's colour of #marker
INSERTED = "loaded over HF"        # what the script writes once everything is in
IMAGES = 4

# argv: address, port, directory. HTTP/1.1 with keep-alive; prints "ready" once bound.
SITE_SERVER = r"""
import functools, http.server, sys
class H(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
s = http.server.ThreadingHTTPServer((sys.argv[1], int(sys.argv[2])),
                                    functools.partial(H, directory=sys.argv[3]))
print("ready", flush=True)
s.serve_forever()
"""

# The site's script: once the page has loaded (style sheet and images in), it checks
# them and says so in the page.
SCRIPT = """"use strict";
window.addEventListener("load", function () {
  var images = Array.prototype.slice.call(document.images);
  var decoded = images.filter(function (i) { return i.complete && i.naturalWidth > 0; });
  var colour = getComputedStyle(document.getElementById("marker")).color;
  var el = document.createElement("p");
  el.id = "hfstack-result";
  el.textContent = "%(inserted)s: images " + decoded.length + "/" + images.length +
    ", colour " + colour;
  document.body.appendChild(el);
});
""" % {"inserted": INSERTED}

# Evaluated in the page once it has loaded: the Navigation and Paint Timing figures (ms
# from the start of navigation; the first paint waited for up to 2 s after load), each
# file's Resource Timing (name, start, connected, request sent, first and last byte of
# the response), the images, and what the site's script wrote.
REPORT = """new Promise(function (resolve) {
  function paints() {
    var p = {};
    performance.getEntriesByType("paint").forEach(function (e) { p[e.name] = e.startTime; });
    return p;
  }
  var done = false;
  function finish() {
    if (done) { return; }
    done = true;
    var nav = performance.getEntriesByType("navigation")[0];
    var p = paints();
    var images = Array.prototype.slice.call(document.images);
    var inserted = document.getElementById("hfstack-result");
    resolve({
      response_end_ms: nav.responseEnd,
      dom_content_loaded_ms: nav.domContentLoadedEventEnd,
      load_ms: nav.loadEventStart,
      first_paint_ms: p["first-paint"] === undefined ? null : p["first-paint"],
      first_contentful_paint_ms:
        p["first-contentful-paint"] === undefined ? null : p["first-contentful-paint"],
      resources: performance.getEntriesByType("resource").length,
      timeline: performance.getEntriesByType("resource").map(function (e) {
        return [e.name.split("/").pop(), e.startTime, e.connectEnd, e.requestStart,
                e.responseStart, e.responseEnd];
      }),
      images: images.length,
      images_decoded:
        images.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length,
      dom: inserted ? inserted.textContent : ""
    });
  }
  if (paints()["first-contentful-paint"] !== undefined) {
    finish();
  } else {
    new PerformanceObserver(finish).observe({ type: "paint", buffered: true });
    setTimeout(finish, 2000);
  }
})"""


EXAMPLE = """<!doctype html>
<html>
<head>
    <title>Example Domain</title>
    <meta charset="utf-8" />
    <meta http-equiv="Content-type" content="text/html; charset=utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <link rel="icon" href="data:,">
    <style type="text/css">
    body {
        background-color: #f0f0f2;
        margin: 0;
        padding: 0;
        font-family: -apple-system, system-ui, BlinkMacSystemFont, "Segoe UI", "Open Sans",
            "Helvetica Neue", Helvetica, Arial, sans-serif;
    }
    div {
        width: 600px;
        margin: 5em auto;
        padding: 2em;
        background-color: #fdfdff;
        border-radius: 0.5em;
        box-shadow: 2px 3px 7px 2px rgba(0,0,0,0.02);
    }
    a:link, a:visited {
        color: #38488f;
        text-decoration: none;
    }
    </style>
</head>
<body>
<div>
    <h1>Example Domain</h1>
    <p>This domain is for use in illustrative examples in documents. You may use this
    domain in literature without prior coordination or asking for permission.</p>
    <p><a href="https://www.iana.org/domains/example">More information...</a></p>
</div>
</body>
</html>
"""


def png(width, height, rng):
    """A PNG of `width` x `height` RGB pixels of noise from `rng` (incompressible,
    as photographs nearly are)."""
    raw = b"".join(b"\x00" + bytes(rng.getrandbits(8) for _ in range(3 * width))
                   for _ in range(height))

    def chunk(kind, data):
        return (struct.pack("!I", len(data)) + kind + data
                + struct.pack("!I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack("!IIBBBBB", width, height, 8, 2,
                                                              0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def write_site(directory, seed=1, image_side=32):
    """The test site in `directory`: index.html, style.css, app.js, img0..3.png, from
    `seed`; and example.html, one file the size of the seed's example.com (about 1.2
    kB, its style inline). Returns {file name: size in bytes} of the site's files."""
    rng = random.Random(seed)
    words = ("link", "frame", "burst", "modem", "station", "window", "stream", "proxy",
             "signal", "channel", "relay", "packet", "antenna", "ionosphere", "skywave")
    paragraphs = "\n".join("<p>" + " ".join(rng.choice(words) for _ in range(60)) + ".</p>"
                           for _ in range(6))
    figures = "\n".join(f'<figure><img src="img{i}.png" width="{image_side}" '
                        f'height="{image_side}" alt="image {i}"><figcaption>figure {i}'
                        "</figcaption></figure>" for i in range(IMAGES))
    html = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>HF test site</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="style.css">
<script src="app.js" defer></script>
</head>
<body>
<h1 id="marker">A page over STANAG 5066</h1>
{paragraphs}
<div class="figures">
{figures}
</div>
</body>
</html>
"""
    rules = "\n".join(f".c{i} {{ margin: {i % 7}px; padding: {i % 5}px; color: "
                      f"#{rng.getrandbits(24):06x}; }}" for i in range(40))
    css = ("body { font-family: sans-serif; max-width: 40em; margin: auto; }\n"
           f"#marker {{ color: {CSS_COLOR}; }}\n"
           "figure { display: inline-block; margin: 0.5em; }\n" + rules + "\n")
    files = {"index.html": html.encode(), "style.css": css.encode(), "app.js": SCRIPT.encode()}
    for i in range(IMAGES):
        files[f"img{i}.png"] = png(image_side, image_side, rng)
    os.makedirs(directory, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(directory, name), "wb") as f:
            f.write(data)
    with open(os.path.join(directory, "example.html"), "w") as f:
        f.write(EXAMPLE)
    return {name: len(data) for name, data in files.items()}


class browser_error(RuntimeError):
    """Chromium did not start, the page did not load, or a deadline passed."""


# Runs argv[3:] with argv[1] as its fd 3 and argv[2] as its fd 4 (sh cannot name
# descriptors over 9), both first copied above 9 so that neither overwrites the other.
PIPE_SHIM = ("import fcntl, os, sys\n"
             "high = [fcntl.fcntl(int(fd), fcntl.F_DUPFD, 10) for fd in sys.argv[1:3]]\n"
             "os.dup2(high[0], 3)\n"
             "os.dup2(high[1], 4)\n"
             "os.execvp(sys.argv[3], sys.argv[3:])\n")


class devtools_pipe:
    """The DevTools protocol over --remote-debugging-pipe: JSON messages ending in NUL,
    Chromium reading fd 3 and writing fd 4."""

    def __init__(self, prefix, arguments, log_path):
        self.to_r, self.to_w = os.pipe()
        self.from_r, self.from_w = os.pipe()
        command = [*prefix, "chromium", *arguments]
        with open(log_path, "wb") as errors:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", PIPE_SHIM, str(self.to_r), str(self.from_w), *command],
                pass_fds=(self.to_r, self.from_w), stdin=subprocess.DEVNULL,
                stdout=errors, stderr=errors)
        os.close(self.to_r)
        os.close(self.from_w)
        self.buffer = b""
        self.events = []
        self.next_id = 1

    def _read(self, deadline):
        """One more message from Chromium; browser_error once `deadline` passes."""
        for _ in range(1_000_000):
            end = self.buffer.find(b"\0")
            if end >= 0:
                message, self.buffer = self.buffer[:end], self.buffer[end + 1:]
                return json.loads(message)
            left = deadline - time.monotonic()
            if left <= 0:
                raise browser_error("no answer from Chromium in time")
            ready, _, _ = select.select([self.from_r], [], [], left)
            if ready:
                data = os.read(self.from_r, 1 << 20)
                if not data:
                    raise browser_error(f"Chromium exited ({self.proc.poll()})")
                self.buffer += data
        raise browser_error("Chromium's messages never ended")

    def call(self, method, params=None, session=None, deadline=None):
        """Sends a command and returns its result (events meanwhile are kept)."""
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.next_id += 1
        os.write(self.to_w, json.dumps(message).encode() + b"\0")
        deadline = deadline or time.monotonic() + 60
        for _ in range(100_000):
            reply = self._read(deadline)
            if reply.get("id") == message["id"]:
                if "error" in reply:
                    raise browser_error(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            self.events.append(reply)
        raise browser_error(f"{method}: no reply among 100000 messages")

    def wait_event(self, method, session, deadline):
        """The params of the first event `method` of `session`."""
        for _ in range(100_000):
            for i, e in enumerate(self.events):
                if e.get("method") == method and e.get("sessionId") == session:
                    return self.events.pop(i).get("params", {})
            self.events.append(self._read(deadline))
        raise browser_error(f"no {method} among 100000 messages")

    def close(self):
        try:
            os.write(self.to_w, json.dumps({"id": self.next_id, "method": "Browser.close"}).encode()
                     + b"\0")
        except OSError:
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=20)
        for fd in (self.to_w, self.from_r):
            try:
                os.close(fd)
            except OSError:
                pass


def unavailable():
    """Why headless Chromium cannot run here, or None."""
    if not shutil.which("chromium"):
        return "chromium is not installed (make test installs it)"
    return None


def load_page(prefix, url, proxy=None, timeout_s=300.0):
    """Loads `url` in a fresh headless Chromium (an empty profile: nothing cached),
    started with the command prefix `prefix` (e.g. `ip netns exec NS`), through
    `proxy` ("socks5://HOST:PORT") or directly. Returns REPORT's figures (times in ms
    from the start of navigation; "dom": what the site's script wrote) with
    "wall_load_s" (from the navigate command to the load event, by this process's
    clock). browser_error when it does not load within `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    profile = tempfile.mkdtemp(prefix="hfstack-chromium-")
    arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
                 f"--user-data-dir={profile}", "--no-first-run", "--no-default-browser-check",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-extensions", "--disable-default-apps",
                 "--mute-audio", "--disable-dev-shm-usage", "about:blank"]
    if proxy:
        arguments.insert(0, f"--proxy-server={proxy}")
    browser = devtools_pipe(prefix, arguments, os.path.join(profile, "chromium.log"))
    try:
        target = browser.call("Target.createTarget", {"url": "about:blank"},
                              deadline=deadline)["targetId"]
        session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                               deadline=deadline)["sessionId"]
        browser.call("Page.enable", session=session, deadline=deadline)
        start = time.monotonic()
        went = browser.call("Page.navigate", {"url": url}, session=session, deadline=deadline)
        if went.get("errorText"):
            raise browser_error(f"{url}: {went['errorText']}")
        browser.wait_event("Page.loadEventFired", session, deadline)
        wall = time.monotonic() - start
        value = browser.call("Runtime.evaluate", {"expression": REPORT, "awaitPromise": True,
                                                  "returnByValue": True},
                             session=session, deadline=deadline)
        result = value.get("result", {}).get("value")
        if not isinstance(result, dict):
            raise browser_error(f"the page gave no report: {value}")
        result["wall_load_s"] = wall
        return result
    except browser_error:
        with open(os.path.join(profile, "chromium.log"), "rb") as f:
            log.warning("Chromium's log ends: %s", f.read()[-2000:].decode(errors="replace"))
        raise
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)
