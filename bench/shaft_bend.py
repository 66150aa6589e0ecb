"""How far the club head moves across the shaft in a capture: per frame, the distance [mm]
of the club-head point (the mean of the club-head markers) from the line through the
shaft markers (their principal axis), against its mean over the address frames, and the
club-head speed [m/s] over each frame interval.

A rigid club keeps that distance constant (up to marker noise, about a millimetre); a
shaft that bends changes it (harness/capture/events.py ``across_shaft``). The shaft
markers sit near the grip, so the distance measures the bend below them.

    .venv/bin/python bench/shaft_bend.py [CAPTURE.c3d] [--around N]
"""
from __future__ import annotations

import argparse

import numpy as np

from harness.capture import events
from harness.capture.ingest import ingest
from harness.capture.markerset import DRIVER_SWING


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("capture", nargs="?", default="data/swing/driver.c3d")
    ap.add_argument("--around", type=int, default=12,
                    help="frames listed on each side of ball contact")
    args = ap.parse_args()
    cap = ingest(args.capture)
    ev = events.detect(cap)
    head = events.club_head_point(cap)
    shaft = np.stack([cap.marker(l) for l in DRIVER_SWING.shaft], axis=1)
    dist = events.across_shaft(head, shaft)
    addr = np.arange(max(0, ev.address_frame - 10), ev.takeaway_frame + 1)
    ref = float(np.nanmean(dist[addr]))
    speed = events.interval_speeds(head, cap.rate_hz)
    dev = 1e3 * (dist - ref)
    print(f"# {args.capture}: {cap.rate_hz:g} Hz; the club head's distance from the shaft "
          f"markers' line at address {1e3 * ref:.1f} mm (SD {1e3 * np.nanstd(dist[addr]):.1f} "
          f"mm over frames {addr[0]}–{addr[-1]})")
    down = np.arange(ev.top_frame, ev.impact_frame + 1)
    print(f"# top → contact (frames {down[0]}–{down[-1]}): change from address "
          f"{np.nanmin(dev[down]):+.1f} … {np.nanmax(dev[down]):+.1f} mm")
    f = ev.impact_frame
    print("frame  t [s]   change from address [mm]  club-head speed over (k−1, k) [m/s]")
    for k in range(max(1, f - args.around), min(cap.n_frames, f + args.around + 1)):
        mark = "  ← last frame before contact" if k == f else ""
        print(f"{k:5d}  {k / cap.rate_hz:.4f}  {dev[k]:+8.1f}  {speed[k]:8.2f}{mark}")


if __name__ == "__main__":
    main()
