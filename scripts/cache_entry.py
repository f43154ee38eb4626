"""Entries of the build cache (scripts/cache.mk): ROOT/NAME-KEY/, one
directory each, for the test fixtures (tests/fixture_cache.py) and the
kernel's products (scripts/kernel.mk).

KEY is a hash of everything that made the entry: a changed input makes a
new entry, never a stale hit.  An entry is complete when it has its
SHA256SUMS, written last; each hit checks every file against it, so a file
changed by hand (or a half-written entry) is built again, not used.
Entries not used for RESCUE_CACHE_MAX_AGE days (default 30), and the least
recently used ones past the root's size limit, are removed after each use;
an entry in use (its lock held) never is.

    entry = cache_entry.Entry(root, 'debian12-bios', key, max_gb)
    path = entry.get(build, log)     # build(tmpdir) fills a new entry

From make, for files built elsewhere:

    cache_entry.py restore ROOT NAME KEY DIR FILE...
        copy the entry's FILEs (paths relative to DIR) into DIR and print
        the entry's path; exit 1, saying why, when there is no complete,
        unchanged entry of exactly these files
    cache_entry.py store ROOT NAME KEY MAX_GB DIR FILE...
        make the entry from DIR's FILEs; one that cannot be written (a
        full disk) is a warning, not an error
"""

import contextlib
import fcntl
import hashlib
import os
import shutil
import sys
import time

SUMS = 'SHA256SUMS'
USED = 'last-used'
DAY = 86400


def sha256(path):
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            h.update(block)
    return h.hexdigest()


def max_age():
    return float(os.environ.get('RESCUE_CACHE_MAX_AGE', '30')) * DAY


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
    """One cached entry: root/NAME-KEY; root's entries take at most
    max_gb GB in all."""

    def __init__(self, root, name, key, max_gb):
        self.root = root
        self.dir = os.path.join(root, '%s-%s' % (name, key))
        self.lock = self.dir + '.lock'
        self.max_bytes = int(float(max_gb) * (1 << 30))

    def why_not_usable(self):
        """None when the entry is complete and unchanged, else why not."""
        if not os.path.isdir(self.dir):
            return 'not cached'
        if _checked.get(self.dir) == _stats(self.dir):
            return None
        return check_sums(self.dir)

    def get(self, build, log):
        """The entry's directory.  When it is missing, incomplete or
        changed, build(tmpdir) makes it anew first.  log: a file."""
        with locked(self.lock):
            why = self.why_not_usable()
            if why:
                log.write('[cache] %s: %s; building it\n' % (self.dir, why))
                log.flush()
                self.make(build)
            else:
                log.write('[cache] %s (cached, checksums match)\n' % self.dir)
            self.used()
        prune(self.root, log, self.max_bytes, keep=self.dir)
        return self.dir

    def used(self):
        _checked[self.dir] = _stats(self.dir)
        with open(os.path.join(self.dir, USED), 'w'):
            pass

    def make(self, build):
        """The entry anew from build(tmpdir); the caller holds the lock."""
        tmp = self.dir + '.tmp'
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        build(tmp)
        write_sums(tmp)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.rename(tmp, self.dir)


def prune(root_dir, log, max_bytes, keep=None):
    """Remove entries unused for max_age(), then the least recently used
    past max_bytes in all; never `keep`, nor those whose lock another
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
        if not old and total <= max_bytes:
            continue
        with locked(d + '.lock', block=False) as mine:
            if not mine:
                continue
            log.write('[cache] pruned %s (%s)\n' % (
                d, 'unused for %d days' % ((now - _last_used(d)) // DAY) if old
                else 'over %.1f GB in all' % (max_bytes / (1 << 30))))
            shutil.rmtree(d, ignore_errors=True)
            total -= sizes[d]


def copy(src_dir, dst_dir, rels):
    """Copy each relative path in rels from src_dir to dst_dir, through a
    temporary name: a file is either the old one or the whole new one."""
    for rel in rels:
        dst = os.path.join(dst_dir, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(os.path.join(src_dir, rel), dst + '.tmp')
        os.rename(dst + '.tmp', dst)


def main(argv):
    usage = ('usage: cache_entry.py restore ROOT NAME KEY DIR FILE...\n'
             '       cache_entry.py store ROOT NAME KEY MAX_GB DIR FILE...\n')
    if len(argv) >= 6 and argv[0] == 'restore':
        root_dir, name, key, d, rels = argv[1], argv[2], argv[3], argv[4], argv[5:]
        entry = Entry(root_dir, name, key, 0)
        with locked(entry.lock):
            why = entry.why_not_usable()
            if not why and sorted(rels) != files(entry.dir):
                why = 'it holds other files than %s' % ' '.join(sorted(rels))
            if why:
                print('%s: %s' % (entry.dir, why))
                return 1
            copy(entry.dir, d, rels)
            entry.used()
        print(entry.dir)
        return 0
    if len(argv) >= 7 and argv[0] == 'store':
        root_dir, name, key, max_gb, d, rels = argv[1], argv[2], argv[3], argv[4], argv[5], argv[6:]
        entry = Entry(root_dir, name, key, max_gb)
        try:
            with locked(entry.lock):
                entry.make(lambda tmp: copy(d, tmp, rels))
                entry.used()
        except OSError as e:
            # A full or read-only cache costs the next clone a build, no more.
            shutil.rmtree(entry.dir + '.tmp', ignore_errors=True)
            sys.stderr.write('warning: %s not stored in the cache: %s\n' % (name, e))
            return 0
        prune(root_dir, sys.stdout, entry.max_bytes, keep=entry.dir)
        return 0
    sys.stderr.write(usage)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
