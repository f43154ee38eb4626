#!/usr/bin/python3
"""Take the README's screenshots: QEMU's screendump of the VGA screen.

    docs/screenshots.py ISO OUTDIR LOGDIR

Boots the ISO from a CD on the boot tests' BIOS machine (tests/qemu.py,
which has a VGA card), dumps the isolinux menu, picks the default entry
through the serial console, types a command on the VGA console's own shell
(QEMU sendkey) and dumps the screen again. The console log goes to
LOGDIR/screenshots.log, its scratch files (the monitor socket) to
LOGDIR/screenshots.work until it succeeds.
"""
import os
import re
import shutil
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests'))
from qemu import MENU, MENU_TIMEOUT, Ctx, Fail, boot_rescue, poweroff  # noqa: E402

KEYS = {" ": "spc", "/": "slash", "-": "minus", "|": "shift-backslash",
        "\n": "ret", ".": "dot", "=": "equal",
        ";": "semicolon"}


class Monitor:
    """QEMU's human monitor on a unix socket: one command, wait for the
    next "(qemu) " prompt."""

    def __init__(self, path, secs=30):
        deadline = time.monotonic() + secs
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise Fail('QEMU\'s monitor socket %s never opened' % path)
                time.sleep(0.1)
        self.sock.settimeout(secs)
        self._prompt()

    def _prompt(self):
        got = b''
        while not got.endswith(b'(qemu) '):
            data = self.sock.recv(4096)
            if not data:
                raise Fail('QEMU\'s monitor closed')
            got += data

    def cmd(self, line):
        self.sock.sendall(line.encode() + b'\n')
        self._prompt()


def type_on_vga(mon, text):
    for ch in text:
        mon.cmd("sendkey " + KEYS.get(ch, ch))


def main():
    iso, outdir, logdir = (os.path.abspath(p) for p in sys.argv[1:4])
    os.makedirs(outdir, exist_ok=True)
    c = Ctx('screenshots', iso, logdir)
    try:
        sock = os.path.join(c.work, 'monitor')
        vm = c.machine(c.cdrom(), extra=['-monitor', 'unix:%s,server=on,wait=off' % sock])
        mon = Monitor(sock)
        # Not menu(): the picture is taken while the countdown shows.
        vm.wait(re.escape(MENU['poweroff'][1]), 'the whole isolinux menu', MENU_TIMEOUT)
        vm.wait('Booting the rescue system in', 'the menu countdown', 20)
        time.sleep(0.5)
        menu = os.path.join(outdir, "boot-menu.png")
        mon.cmd("screendump %s -f png" % menu)
        vm.send(MENU['rescue'][0])
        boot_rescue(vm)
        time.sleep(1)
        type_on_vga(mon, "mount -t devtmpfs; ls -l /dev/null /dev/sr0\n")
        time.sleep(2)
        shell = os.path.join(outdir, "rescue-shell.png")
        mon.cmd("screendump %s -f png" % shell)
        poweroff(vm)
    except Fail as e:
        sys.exit('screenshots: %s (log: %s)' % (e, c.log_path))
    finally:
        c.close()
    shutil.rmtree(c.work)
    print("  SHOT      %s\n  SHOT      %s" % (menu, shell))


if __name__ == "__main__":
    main()
