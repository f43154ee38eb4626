#!/usr/bin/python3
"""Take the README's screenshots: QEMU's screendump of the VGA screen.

    docs/screenshots.py ISO OUTDIR

Boots the ISO from a CD under SeaBIOS with a VGA card, dumps the isolinux
menu, picks the default entry through the serial console, types a command
on the VGA console's own shell (QEMU sendkey) and dumps the screen again.
"""
import os
import sys
import tempfile
import time

import pexpect

KEYS = {" ": "spc", "/": "slash", "-": "minus", "|": "shift-backslash",
        "\n": "ret", ".": "dot", "=": "equal",
        ";": "semicolon"}


def monitor(mon, cmd):
    mon.sendline(cmd)
    mon.expect_exact("(qemu)")


def type_on_vga(mon, text):
    for ch in text:
        monitor(mon, "sendkey " + KEYS.get(ch, ch))


def main():
    iso, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="rescue-shots-")
    sock = os.path.join(tmp, "mon")
    qemu = pexpect.spawn(
        "qemu-system-x86_64", ["-accel", "tcg", "-m", "256", "-nodefaults",
        "-no-reboot", "-display", "none", "-vga", "std", "-serial", "stdio",
        "-monitor", "unix:%s,server=on,wait=off" % sock,
        "-drive", "file=%s,media=cdrom,if=ide,readonly=on" % iso],
        encoding="latin-1", timeout=90)
    while not os.path.exists(sock):
        time.sleep(0.1)
    mon = pexpect.spawn("python3", ["-c",
        "import socket,sys,os,select\n"
        "s=socket.socket(socket.AF_UNIX);s.connect(%r)\n"
        "while True:\n"
        " r,_,_=select.select([s,0],[],[])\n"
        " if s in r:\n"
        "  d=s.recv(4096)\n"
        "  if not d: break\n"
        "  os.write(1,d)\n"
        " if 0 in r: s.sendall(os.read(0,4096))\n" % sock],
        encoding="latin-1", timeout=30)
    mon.expect_exact("(qemu)")

    qemu.expect("ower off")     # the last entry: the menu is drawn
    qemu.expect("Booting the rescue system in")
    time.sleep(0.5)
    menu = os.path.join(outdir, "boot-menu.png")
    monitor(mon, "screendump %s -f png" % menu)
    qemu.send("r")
    qemu.expect(r"rescue:/# ")
    time.sleep(1)
    type_on_vga(mon, "mount -t devtmpfs; ls -l /dev/null /dev/sr0\n")
    time.sleep(2)
    shell = os.path.join(outdir, "rescue-shell.png")
    monitor(mon, "screendump %s -f png" % shell)
    qemu.sendline("poweroff")
    qemu.expect(pexpect.EOF)
    print("  SHOT      %s\n  SHOT      %s" % (menu, shell))


if __name__ == "__main__":
    main()
