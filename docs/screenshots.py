#!/usr/bin/python3
"""Take the README's screenshots: QEMU's screendump of the VGA screen.

    docs/screenshots.py ISO OUTDIR

Boots the ISO from a CD under SeaBIOS with a VGA card, dumps the isolinux
menu, picks the default entry through the serial console, types a command
on the VGA console's own shell (QEMU sendkey) and dumps the screen again.
Then boots it under OVMF with Secure Boot on and dumps MokManager's file
chooser with the ISO's certificate selected (the README's enrollment).
"""
import os
import sys
import tempfile
import time

import pexpect

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests'))
from qemu import MENU, OVMF, OVMF_DIR, SECURE_BOOT_ARGS  # noqa: E402

KEYS = {" ": "spc", "/": "slash", "-": "minus", "|": "shift-backslash",
        "\n": "ret", ".": "dot", "=": "equal",
        ";": "semicolon"}


def monitor(mon, cmd):
    mon.sendline(cmd)
    mon.expect_exact("(qemu)")


def type_on_vga(mon, text):
    for ch in text:
        monitor(mon, "sendkey " + KEYS.get(ch, ch))


def start(iso, tmp, extra=()):
    """QEMU on the ISO as a CD, serial on a pexpect pty, monitor on a socket."""
    sock = os.path.join(tmp, "mon")
    qemu = pexpect.spawn(
        "qemu-system-x86_64", ["-accel", "tcg", "-m", "256", "-nodefaults",
        "-no-reboot", "-display", "none", "-vga", "std", "-serial", "stdio",
        "-monitor", "unix:%s,server=on,wait=off" % sock] + list(extra) +
        ["-drive", "file=%s,media=cdrom,if=ide,readonly=on" % iso],
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
    return qemu, mon


def menu_and_shell(iso, outdir, tmp):
    qemu, mon = start(iso, tmp)
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
    return [menu, shell]


def mokmanager(iso, outdir, tmp):
    """GRUB's Enroll entry, then MokManager: Enroll key from disk, the ESP,
    EFI/, and the cursor on rescue.cer.  MokManager's cursor starts on the
    first row of each list; Down moves it."""
    code, template = OVMF["ms"]
    efivars = os.path.join(tmp, "vars.fd")
    with open(os.path.join(OVMF_DIR, template), "rb") as f, open(efivars, "wb") as g:
        g.write(f.read())
    qemu, mon = start(iso, tmp, SECURE_BOOT_ARGS + [
        "-drive", "if=pflash,format=raw,unit=0,readonly=on,file=" + os.path.join(OVMF_DIR, code),
        "-drive", "if=pflash,format=raw,unit=1,file=" + efivars])
    down = "\x1b[B"                     # cursor down on the serial console
    steps = [(MENU["mok"][1], MENU["mok"][0]),          # GRUB's Enroll entry
             ("Press any key to perform MOK management", " "),
             ("Enroll hash from disk", down + "\r"),     # Continue boot, Enroll key ...
             ("RESCUE_EFI", "\r"),                      # the only volume: the ESP
             ("boot/", "\r"),                           # EFI/, boot/
             ("rescue.cer", down + down)]               # ../, BOOT/, rescue.cer
    for text, keys in steps:
        qemu.expect_exact(text)
        time.sleep(1)
        qemu.send(keys)
    time.sleep(2)
    shot = os.path.join(outdir, "mokmanager.png")
    monitor(mon, "screendump %s -f png" % shot)
    qemu.terminate(force=True)
    return [shot]


def main():
    iso, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    shots = []
    for take in (menu_and_shell, mokmanager):
        shots += take(iso, outdir, tempfile.mkdtemp(prefix="rescue-shots-"))
    print("".join("  SHOT      %s\n" % s for s in shots), end="")


if __name__ == "__main__":
    main()
