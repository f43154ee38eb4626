"""Test fixtures cached outside the clone: RESCUE_CACHE/fixtures/NAME-KEY/
(build/fixtures/ when RESCUE_CACHE is empty).

KEY is a hash of everything that made the fixture (its script, package
list and package versions, the tool versions on the ISO): a changed input
makes a new entry, never a stale hit.  An entry is complete when it has its
SHA256SUMS, written last; each hit checks every file against it, so a disk
changed by hand (or a half-written one) is built again, not used.  Entries
not used for RESCUE_FIXTURE_MAX_AGE days (default 30), and the least
recently used ones past RESCUE_FIXTURE_MAX_GB (default 40) in all, are
removed after each build; an entry in use (its lock held) never is.

    entry = fixture_cache.Entry(fallback_root, 'debian12-bios', key)
    path = entry.get(build, log)     # build(tmpdir) fills a new entry
"""

import contextlib
import fcntl
import os
import shutil
import time

from qemu import sha256

SUMS = 'SHA256SUMS'
USED = 'last-used'
DAY = 86400


def root(fallback):
    """Where entries live: the build cache's fixtures/, else `fallback`."""
    cache = os.environ.get('RESCUE_CACHE')
    return os.path.join(cache, 'fixtures') if cache else fallback


def max_age():
    return float(os.environ.get('RESCUE_FIXTURE_MAX_AGE', '30')) * DAY


def max_bytes():
    return int(float(os.environ.get('RESCUE_FIXTURE_MAX_GB', '40')) * (1 << 30))


@contextlib.contextmanager
def locked(path, block=True):
    """Hold an exclusive lock on the file `path` (made if missing); yields
    False instead of waiting when block is False and another holds it."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'a') as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | (0 if block else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True


def files(d):
    """Every regular file under d, relative, sorted; the cache's own
    bookkeeping left out."""
    out = []
    for top, _, names in os.walk(d):
        for n in names:
            rel = os.path.relpath(os.path.join(top, n), d)
            if rel not in (SUMS, USED):
                out.append(rel)
    return sorted(out)


def write_sums(d):
    """Record every file's sha256 in d/SHA256SUMS (written last: an entry
    without it is incomplete)."""
    lines = ['%s  %s\n' % (sha256(os.path.join(d, rel)), rel) for rel in files(d)]
    tmp = os.path.join(d, SUMS + '.tmp')
    with open(tmp, 'w') as f:
        f.writelines(lines)
    os.rename(tmp, os.path.join(d, SUMS))


def check_sums(d):
    """None when every file of the entry d matches its SHA256SUMS, else
    what is wrong."""
    try:
        with open(os.path.join(d, SUMS)) as f:
            recorded = dict(reversed(l.rstrip('\n').split('  ', 1)) for l in f if l.strip())
    except FileNotFoundError:
        return 'incomplete (no %s)' % SUMS
    except ValueError:
        return 'its %s is malformed' % SUMS
    present = files(d)
    if sorted(recorded) != present:
        return 'its files differ from %s' % SUMS
    for rel in present:
        if sha256(os.path.join(d, rel)) != recorded[rel]:
            return '%s was changed after it was made' % rel
    return None


# Entries this process checked: dir -> every file's (size, mtime), so
# that a suite whose tests each ask for the fixture hashes its disks once,
# and still sees a file changed since.
_checked = {}


def _stats(d):
    names = files(d) + ([SUMS] if os.path.exists(os.path.join(d, SUMS)) else [])
    return {rel: (st.st_size, st.st_mtime_ns)
            for rel in names for st in [os.stat(os.path.join(d, rel))]}


def _size(d):
    """Bytes d takes on disk (sparse files count what they use)."""
    total = 0
    for top, _, names in os.walk(d):
        for n in names:
            try:
                total += os.lstat(os.path.join(top, n)).st_blocks * 512
            except FileNotFoundError:
                pass
    return total


def _last_used(d):
    try:
        return os.stat(os.path.join(d, USED)).st_mtime
    except FileNotFoundError:
        return os.stat(d).st_mtime


class Entry:
    """One cached fixture: root/NAME-KEY."""

    def __init__(self, fallback_root, name, key):
        self.root = root(fallback_root)
        self.dir = os.path.join(self.root, '%s-%s' % (name, key))
        self.lock = self.dir + '.lock'

    def get(self, build, log):
        """The entry's directory.  When it is missing, incomplete or
        changed, build(tmpdir) makes it anew first.  log: a file."""
        with locked(self.lock):
            if not os.path.isdir(self.dir):
                why = 'not cached'
            elif _checked.get(self.dir) == _stats(self.dir):
                why = None
            else:
                why = check_sums(self.dir)
            if why:
                log.write('[fixture] %s: %s; building it\n' % (self.dir, why))
                log.flush()
                self._build(build)
            else:
                log.write('[fixture] %s (cached, checksums match)\n' % self.dir)
            _checked[self.dir] = _stats(self.dir)
            with open(os.path.join(self.dir, USED), 'w'):
                pass
        prune(self.root, log, keep=self.dir)
        return self.dir

    def _build(self, build):
        tmp = self.dir + '.tmp'
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        build(tmp)
        write_sums(tmp)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.rename(tmp, self.dir)


def prune(root_dir, log, keep=None):
    """Remove entries unused for max_age(), then the least recently used
    past max_bytes() in all; never `keep`, nor those whose lock another
    process holds."""
    try:
        names = os.listdir(root_dir)
    except FileNotFoundError:
        return
    entries = [os.path.join(root_dir, n) for n in names
               if os.path.isfile(os.path.join(root_dir, n, SUMS))]
    entries.sort(key=_last_used)
    now = time.time()
    sizes = {d: _size(d) for d in entries}
    total = sum(sizes.values())
    for d in entries:
        if d == keep:
            continue
        old = now - _last_used(d) > max_age()
        if not old and total <= max_bytes():
            continue
        with locked(d + '.lock', block=False) as mine:
            if not mine:
                continue
            log.write('[fixture] pruned %s (%s)\n' % (
                d, 'unused for %d days' % ((now - _last_used(d)) // DAY) if old
                else 'cache over %d GB' % (max_bytes() >> 30)))
            shutil.rmtree(d, ignore_errors=True)
            total -= sizes[d]
