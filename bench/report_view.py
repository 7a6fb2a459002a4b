"""Look at the evaluation report as a reader would: headless Chromium renders it to a PNG.

    apt-get install chromium          # Debian's package; not needed by the pipeline itself
    python -m bench.report_view [--report data/evaluate/report.html] [--out /tmp/report.png]

Checks what a reader would notice, from the rendered page's text (Chromium's ``--dump-dom``):
no "nan" anywhere, every matrix cell in the report's tables shows its n, the page opens with the
unigram-baseline verdict, the paragraph of findings and the table of every test made are there,
and judge and loss heatmaps are both present. Prints each check and the
screenshot's path (open it to see the page); exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    sys.exit("no Chromium found: apt-get install chromium")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--report", type=Path, default=Path("data/evaluate/report.html"))
    ap.add_argument("--out", type=Path, default=Path("/tmp/report.png"))
    ap.add_argument("--width", type=int, default=1600)
    ap.add_argument("--height", type=int, default=5000)
    args = ap.parse_args()
    url = args.report.resolve().as_uri()
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    size = f"--window-size={args.width},{args.height}"
    shot = [chromium(), *flags, f"--screenshot={args.out}", size, url]
    subprocess.run(shot, check=True, capture_output=True, timeout=300)
    dom = subprocess.run([chromium(), *flags, "--dump-dom", url], check=True, capture_output=True, text=True,
                         timeout=300).stdout  # fmt: skip
    text = re.sub(r"<[^>]+>", " ", re.sub(r'src="data:[^"]+"', "", dom))
    matrix_tables = [
        t for h, t in re.findall(r"<h3>([^<]*)</h3>\s*(<table.*?</table>)", dom, re.S) if "n:" in h
    ]
    cells = [c for t in matrix_tables for c in re.findall(r"<td[^>]*>([^<]*)</td>", t)]
    checks = {
        "no 'nan' on the page": re.search(r"\bnan\b", text, re.IGNORECASE) is None,
        "findings paragraph": "What the numbers show" in text,
        "opens with the unigram-baseline verdict": "unigram baseline"
        in (re.findall(r"<b>([^<]*)</b>", dom) or [""])[0],
        "every test made, with Holm-adjusted p": "Every test made" in text and "adjusted p" in text,
        "judge heatmaps": "summed scores" in dom,
        "loss heatmaps": ": loss" in dom,
        "every matrix cell shows its n": bool(cells) and all("(n=" in c for c in cells),
    }
    for name, ok in checks.items():
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
    print(f"screenshot: {args.out} ({args.width}x{args.height})")
    sys.exit(0 if all(checks.values()) else 1)


if __name__ == "__main__":
    main()
