#!/usr/bin/python3
"""The build cache's entries' promises (scripts/cache_entry.py, through
tests/fixture_cache.py as the suites use it, and its command line as make
uses it for the kernel), on small real fixtures in a scratch RESCUE_CACHE:
a hit builds nothing; a disk changed by hand, a file added or removed, and
an entry whose build was cut off are built again; a changed key is a new
entry; old entries and those past the size limit are pruned, the one in
use never; `restore` copies a stored entry's files, and refuses a missing
or changed one.  Run by make check-cache.

    tests/cache_entry_test.py SCRATCH
"""

import io
import os
import shutil
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_cache  # noqa: E402
import cache_entry  # noqa: E402  (on the path fixture_cache set)

SCRATCH = None


class Builds:
    """A fixture build: a 1 MiB disk image with a partition-table-like
    header and a layout file, as the real fixtures have; counts its calls."""

    def __init__(self):
        self.calls = 0

    def __call__(self, d):
        self.calls += 1
        with open(os.path.join(d, 'disk.img'), 'wb') as f:
            f.write(b'\xf6' * (1 << 20))     # written, not sparse: 1 MiB on disk
            f.seek(510)
            f.write(b'\x55\xaa')
        with open(os.path.join(d, 'layout'), 'w') as f:
            f.write('ROOT_UUID=1234\n')


class FixtureCacheTest(unittest.TestCase):

    def setUp(self):
        self.cache = os.path.join(SCRATCH, self.id().rsplit('.', 1)[-1])
        shutil.rmtree(self.cache, ignore_errors=True)
        os.makedirs(self.cache)
        os.environ['RESCUE_CACHE'] = self.cache
        os.environ.pop('RESCUE_CACHE_MAX_AGE', None)
        os.environ.pop('RESCUE_FIXTURE_MAX_GB', None)
        self.log = io.StringIO()
        self.build = Builds()

    def get(self, key='k1', name='disk'):
        # A new Entry each time: a new test process, as a second suite is.
        return fixture_cache.Entry('/nonexistent', name, key).get(self.build, self.log)

    def test_hit_builds_nothing(self):
        d = self.get()
        self.assertEqual(d, os.path.join(self.cache, 'fixtures', 'disk-k1'))
        self.get()
        self.assertEqual(self.build.calls, 1, self.log.getvalue())
        self.assertIn('checksums match', self.log.getvalue())

    def test_disk_changed_by_hand_is_rebuilt(self):
        d = self.get()
        with open(os.path.join(d, 'disk.img'), 'r+b') as f:
            f.seek(510)
            f.write(b'\x00')
        self.get()
        self.assertEqual(self.build.calls, 2)
        self.assertIn('disk.img was changed after it was made', self.log.getvalue())
        with open(os.path.join(d, 'disk.img'), 'rb') as f:
            f.seek(510)
            self.assertEqual(f.read(2), b'\x55\xaa')

    def test_added_or_removed_file_is_rebuilt(self):
        d = self.get()
        open(os.path.join(d, 'stray'), 'w').close()
        self.get()
        self.assertEqual(self.build.calls, 2)
        self.assertFalse(os.path.exists(os.path.join(d, 'stray')))
        os.unlink(os.path.join(d, 'layout'))
        self.get()
        self.assertEqual(self.build.calls, 3)

    def test_cut_off_build_is_not_used(self):
        d = self.get()
        os.unlink(os.path.join(d, cache_entry.SUMS))   # as if killed before the end
        self.get()
        self.assertEqual(self.build.calls, 2)
        self.assertIn('incomplete', self.log.getvalue())

    def test_new_key_is_a_new_entry(self):
        a = self.get('k1')
        b = self.get('k2')
        self.assertNotEqual(a, b)
        self.assertEqual(self.build.calls, 2)
        self.assertIsNone(cache_entry.check_sums(a))

    def test_old_entry_pruned(self):
        a = self.get('k1')
        past = time.time() - 31 * cache_entry.DAY
        os.utime(os.path.join(a, cache_entry.USED), (past, past))
        b = self.get('k2')
        self.assertFalse(os.path.exists(a), self.log.getvalue())
        self.assertTrue(os.path.exists(b))
        self.assertIn('unused for 31 days', self.log.getvalue())

    def test_size_limit_prunes_least_recently_used_never_current(self):
        os.environ['RESCUE_FIXTURE_MAX_GB'] = str(1.5 / 1024)     # 1.5 MiB: one entry
        a = self.get('k1')
        b = self.get('k2')
        self.assertFalse(os.path.exists(a), self.log.getvalue())
        self.assertTrue(os.path.exists(b))
        os.environ['RESCUE_FIXTURE_MAX_GB'] = str(0.5 / 1024)     # less than one entry
        c = self.get('k3')
        self.assertTrue(os.path.exists(c), 'the entry just used was pruned')

    def test_entry_in_use_not_pruned(self):
        a = self.get('k1')
        past = time.time() - 31 * cache_entry.DAY
        os.utime(os.path.join(a, cache_entry.USED), (past, past))
        with cache_entry.locked(a + '.lock'):
            pid = os.fork()
            if pid == 0:    # another suite, while this one holds a's lock
                try:
                    fixture_cache.Entry('/x', 'disk', 'k2').get(Builds(), io.StringIO())
                finally:
                    os._exit(0)
            os.waitpid(pid, 0)
        self.assertTrue(os.path.exists(a))

    def test_no_cache_uses_fallback(self):
        os.environ['RESCUE_CACHE'] = ''
        fallback = os.path.join(self.cache, 'fallback')
        d = fixture_cache.Entry(fallback, 'disk', 'k1').get(self.build, self.log)
        self.assertEqual(d, os.path.join(fallback, 'disk-k1'))


class CommandLineTest(unittest.TestCase):
    """restore and store, as scripts/kernel.mk runs them."""

    def setUp(self):
        self.base = os.path.join(SCRATCH, self.id().rsplit('.', 1)[-1])
        shutil.rmtree(self.base, ignore_errors=True)
        self.root = os.path.join(self.base, 'kernel')
        self.out = os.path.join(self.base, 'out')
        os.makedirs(os.path.join(self.out, 'arch'))
        for rel, text in (('arch/bzImage', 'kernel\n'), ('release', '6.1\n')):
            with open(os.path.join(self.out, rel), 'w') as f:
                f.write(text)
        self.files = ['arch/bzImage', 'release']
        self.stdout = sys.stdout
        sys.stdout = io.StringIO()

    def tearDown(self):
        sys.stdout = self.stdout

    def cli(self, *args):
        return cache_entry.main(list(args))

    def restore_into(self, d):
        return self.cli('restore', self.root, 'kernel', 'k1', d, *self.files)

    def test_store_then_restore(self):
        self.assertEqual(self.restore_into(self.out), 1)
        self.assertIn('not cached', sys.stdout.getvalue())
        self.assertEqual(self.cli('store', self.root, 'kernel', 'k1', '1', self.out,
                                  *self.files), 0)
        other = os.path.join(self.base, 'clone')
        self.assertEqual(self.restore_into(other), 0, sys.stdout.getvalue())
        with open(os.path.join(other, 'arch/bzImage')) as f:
            self.assertEqual(f.read(), 'kernel\n')

    def test_changed_entry_not_restored(self):
        self.cli('store', self.root, 'kernel', 'k1', '1', self.out, *self.files)
        with open(os.path.join(self.root, 'kernel-k1', 'arch/bzImage'), 'a') as f:
            f.write('x')
        other = os.path.join(self.base, 'clone')
        self.assertEqual(self.restore_into(other), 1)
        self.assertIn('arch/bzImage was changed after it was made', sys.stdout.getvalue())
        self.assertFalse(os.path.exists(os.path.join(other, 'arch/bzImage')))

    def test_other_file_list_not_restored(self):
        self.cli('store', self.root, 'kernel', 'k1', '1', self.out, 'release')
        self.assertEqual(self.restore_into(os.path.join(self.base, 'clone')), 1)
        self.assertIn('other files', sys.stdout.getvalue())


if __name__ == '__main__':
    SCRATCH = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
