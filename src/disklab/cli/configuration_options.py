"""run's options that vary the device's configuration, one run each (cli/run_configured.py parses them): declared
here so that the run command reads as its other options and loads nothing of the configurations until used."""

import click


def configuration_options(command):
    """--fs, --write-cache, --condition, --overprovision, --members, --array, --array-state, --measure-member."""
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


_OPTIONS = (
    click.option("--fs", multiple=True, metavar="TYPE[:MKFS-OPTIONS][@MOUNT-OPTIONS]",
                 help="With a device --target and --destroy-data: make this file system on it (ext4, xfs, btrfs ...), "
                      "mount it, and run the suite on a test file there; repeatable, one stored run per file system, "
                      "e.g. --fs ext4 --fs 'xfs:-d su=64k,sw=4@noatime'."),
    click.option("--write-cache", metavar="on,off",
                 help="With a device --target: run once per state of the drive's volatile write cache (hdparm, sdparm or "
                      "nvme-cli), restored afterwards; combines with --fs (every pair)."),
    click.option("--condition", metavar="STATE,...",
                 help="With a device --target and --destroy-data: run once per state of the device, set before the "
                      "suite: fresh (the whole device discarded; fresh:secure-erase: an NVMe format), full (written "
                      "twice over with 128 KiB sequential writes; full:N: N times), e.g. fresh,full (study M1)."),
    click.option("--overprovision", metavar="PERCENT,...",
                 help="With a device --target and --destroy-data: before each level discard the whole device, then use "
                      "only its first (100 - PERCENT) %, e.g. 0,20,40,60 (the overprovision suite's own levels; study M4)."),
    click.option("--members", metavar="DEVICE,DEVICE,...",
                 help="With --array and --destroy-data, instead of --target: the devices each array is built from, e.g. "
                      "/dev/nvme0n1,/dev/nvme1n1,/dev/nvme2n1,/dev/nvme3n1."),
    click.option("--array", multiple=True, metavar="KIND:LEVEL[:KEY=VALUE...]",
                 help="Build this array over --members, run the suite on it, tear it down (md stopped, superblocks "
                      "cleared; LVM removed, PV labels cleared; btrfs unmounted, signatures wiped); repeatable, one "
                      "stored run per array, e.g. --array md:raid0 --array md:raid5:chunk=64K --array "
                      "md:raid10:layout=f2 (md keys: chunk, layout, bitmap=internal|none, metadata, size: of each member), --array "
                      "lvm:striped:stripes=4:stripesize=64K or lvm:raid0|raid1|raid5|raid6|raid10, --array btrfs:raid10 "
                      "or btrfs:data=raid0:metadata=raid1 (the suite runs on a file in it); md and lvm combine with "
                      "--fs, --write-cache (on the members), --condition."),
    click.option("--array-state", metavar="STATE,...",
                 help="With --array: run once per state of each array: clean (the resync finished first; the default), "
                      "assume-clean (no resync), degraded (a member failed and removed), rebuilding (the suite runs "
                      "while md rebuilds onto a spare; its progress recorded at the start and end of each test)."),
    click.option("--measure-member", is_flag=True,
                 help="With --members and --array: first run the suite on the first member alone (the series' first "
                      "run), so that 'disklab compare series:N' sets the planner's prediction of each array from that "
                      "member beside the array's measured figures."),
)
