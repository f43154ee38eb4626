"""Test fixtures cached outside the clone: RESCUE_CACHE/fixtures/NAME-KEY/
(the suite's own directory under build/ when RESCUE_CACHE is empty), as
entries of scripts/cache_entry.py.  KEY hashes what made the fixture (its
script, package list and package versions, the tool versions on the ISO).
The fixtures take at most RESCUE_FIXTURE_MAX_GB GB (default 40).

    entry = fixture_cache.Entry(fallback_root, 'debian12-bios', key)
    path = entry.get(build, log)     # build(tmpdir) fills a new entry
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'scripts'))
from cache_entry import files, locked  # noqa: E402,F401  (for the suites)
import cache_entry  # noqa: E402


def root(fallback):
    """Where entries live: the build cache's fixtures/, else `fallback`."""
    cache = os.environ.get('RESCUE_CACHE')
    return os.path.join(cache, 'fixtures') if cache else fallback


def Entry(fallback_root, name, key):
    return cache_entry.Entry(root(fallback_root), name, key,
                             os.environ.get('RESCUE_FIXTURE_MAX_GB', '40'))
