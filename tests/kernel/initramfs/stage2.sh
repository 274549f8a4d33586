# The guest's second stage, PID 1 in the overlaid host root: the kernel's file systems, the unpacked kernel's modules
# at /lib/modules/VERSION (so that modprobe works), the disks' drivers, udev (by-id links; lvcreate needs it), then
# the script the host left on the out share; its output, exit status and the kernel log go back there, and the
# guest powers off.
BUSYBOX=/.guest/busybox
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb LANG=C.UTF-8
$BUSYBOX mount -t proc proc /proc
$BUSYBOX mount -t sysfs sys /sys
$BUSYBOX mkdir -p /dev/pts /dev/shm
$BUSYBOX mount -t devpts devpts /dev/pts
$BUSYBOX mount -t tmpfs tmpfs /dev/shm
$BUSYBOX mount -t tmpfs -o mode=755 tmpfs /run
$BUSYBOX mkdir -p /run/lock /run/udev
$BUSYBOX mount -t tmpfs -o mode=1777 tmpfs /tmp
$BUSYBOX mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
$BUSYBOX mount -t configfs configfs /sys/kernel/config 2>/dev/null
$BUSYBOX mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
for word in $(cat /proc/cmdline); do
  case $word in
    guest.out=*) OUT=${word#guest.out=} ;;
    guest.modules=*) MODULES=${word#guest.modules=} ;;
    guest.checkout=*) CHECKOUT=${word#guest.checkout=} ;;
  esac
done
# The checkout from its own share, with a RAM overlay as the root has: under /tmp the guest's RAM disk hides it.
$BUSYBOX mkdir -p /.guest/checkout /.guest/checkout-rw "$CHECKOUT"
$BUSYBOX mount -t 9p -o ro,trans=virtio,version=9p2000.L,access=any,msize=512000,cache=loose checkout \
  /.guest/checkout || echo "guest: cannot mount the checkout" > /dev/console
$BUSYBOX mount -t tmpfs -o mode=755 tmpfs /.guest/checkout-rw
$BUSYBOX mkdir -p /.guest/checkout-rw/upper /.guest/checkout-rw/work
$BUSYBOX mount -t overlay -o lowerdir=/.guest/checkout,upperdir=/.guest/checkout-rw/upper,workdir=/.guest/checkout-rw/work \
  overlay "$CHECKOUT" || echo "guest: cannot lay the overlay over the checkout" > /dev/console
$BUSYBOX mkdir -p "$OUT"
$BUSYBOX mount -t 9p -o trans=virtio,version=9p2000.L,access=any,msize=512000 guestout "$OUT" \
  || echo "guest: cannot mount the out share" > /dev/console
$BUSYBOX mkdir -p "/lib/modules/$(uname -r)"
$BUSYBOX mount --bind "$MODULES" "/lib/modules/$(uname -r)"
hostname guest
ip link set lo up 2>/dev/null
: > /etc/fstab  # the host's mounts mean nothing here
modprobe -a nvme ahci virtio_scsi sd_mod loop 2>&1
/lib/systemd/systemd-udevd --daemon 2>/dev/null
udevadm trigger --action=add --subsystem-match=block --subsystem-match=nvme 2>/dev/null
udevadm settle --timeout=60
export LVM_SUPPRESS_FD_WARNINGS=1 GUEST_OUT=$OUT
cd /
echo "guest: script starts at $(cut -d' ' -f1 /proc/uptime) s" > /dev/console
bash "$OUT/script.sh" > "$OUT/stdout.txt" 2> "$OUT/stderr.txt" < /dev/null
echo $? > "$OUT/status.tmp" && mv "$OUT/status.tmp" "$OUT/status"
dmesg > "$OUT/dmesg.txt" 2>&1
echo "guest: script ends at $(cut -d' ' -f1 /proc/uptime) s" > /dev/console
sync
$BUSYBOX umount "$OUT" 2>/dev/null
$BUSYBOX poweroff -f
