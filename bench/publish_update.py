"""What does publishing one new run into a site of N runs cost, at sizes whose whole publish takes too long to
make (100,000 runs: many hours)? Everything an update in place does but draw the pages nothing changed in.

Run by hand (not part of the tests):

    .venv/bin/python bench/publish_update.py --store /var/tmp/disklab-lab-store-schema11-v2-100000runs.db

The site it updates is made up, not drawn: a manifest that records every run but the store's newest as published
with its fingerprint as it is now (each with 8 tests) and every page of every device's history with its own (the
comparisons of the pages the new run changes as they are, the others' left out), and the runs list of those runs
drawn once. Then it times what `disklab publish` does
into that folder, step by step: the runs read, the manifest read, the pages drawn (the new run's, its device's
newest page, the devices page and the runs list), the update in place. The store is only read.
"""

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from disklab.store.repository import Store
from disklab.web.history import history_pages, page_history, page_pairs, store_devices
from disklab.web.links import StaticLinks
from disklab.web.publish_pages import Site, _index, page, write_site
from disklab.web.publish_update import update_in_place
from disklab.web.published import (
    INDEX, MANIFEST, DeviceEntry, Earlier, RunEntry, device_page_fingerprint, manifest_document, read_manifest,
    run_fingerprints,
)


def made_up_site(store: Store, folder: Path) -> None:
    """The site of every run but the newest, as its manifest and runs list say (no other file is there)."""
    infos = store.list_runs(None)
    runs = run_fingerprints(store, infos)
    newest = infos[0].id
    published = {run_id: RunEntry.of(fingerprint, range(run_id * 8, run_id * 8 + 8))
                 for run_id, fingerprint in runs.items() if run_id != newest}
    before = {run_id: fingerprint for run_id, fingerprint in runs.items() if run_id != newest}
    devices, after = {}, {device.key: device for device in store_devices(store, set(runs))}
    for device in store_devices(store, set(before)):
        pages = history_pages(device)
        for number in range(1, pages + 1):
            name = page(StaticLinks(0).device(device.key, None if number == pages else number))
            fingerprint = device_page_fingerprint(device, number, before)
            # The comparisons of the pages the new run changes, as drawn (their runs are the same): kept.
            changes = number > history_pages(after[device.key]) - 2
            pairs = page_pairs(page_history(device, number, store.get_run), number) if changes else ()
            devices[name] = DeviceEntry(fingerprint, tuple(sorted(pairs)))
    folder.mkdir()
    (folder / INDEX).write_text(_index(Site(folder, folder, Earlier()), store, infos[1:], runs))
    (folder / MANIFEST).write_text(json.dumps(manifest_document(published, devices, ())))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True, help="a store made by bench/make_store.py")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(dir="/var/tmp"))
    try:
        with Store(args.store, read_only=True) as store:
            site_folder = scratch / "site"
            made_up_site(store, site_folder)
            steps = {}
            started = time.monotonic()
            infos = store.list_runs(None)
            steps["the runs read (list_runs)"] = time.monotonic() - started
            mark = time.monotonic()
            earlier = read_manifest(json.loads((site_folder / MANIFEST).read_text()), False)
            steps["the manifest read"] = time.monotonic() - mark
            mark = time.monotonic()
            (scratch / "new").mkdir()
            site = Site(scratch / "new", site_folder, earlier, site_folder)
            write_site(site, store, infos)
            steps[f"fingerprints, devices, {len(site.written)} files drawn"] = time.monotonic() - mark
            mark = time.monotonic()
            update_in_place(site, site_folder)
            steps["the update in place (both manifests written)"] = time.monotonic() - mark
            total = time.monotonic() - started
    finally:
        shutil.rmtree(scratch)
    print(f"one new run into a site of {len(infos) - 1:,} runs ({Path(args.store).name}), seconds:")
    for name, seconds in steps.items():
        print(f"  {name:<52} {seconds:6.2f}")
    print(f"  {'total':<52} {total:6.2f}")


if __name__ == "__main__":
    main()
