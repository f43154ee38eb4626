# The build cache: one directory outside any clone, kept between builds and
# shared by every clone on the machine.  It holds the compiler cache of the
# kernel build (ccache) and the Debian packages that `make` and the test
# fixtures download.
#
#   RESCUE_CACHE=DIR     the cache (default /var/cache/rescue-iso as root,
#                        ${XDG_CACHE_HOME:-~/.cache}/rescue-iso otherwise)
#   RESCUE_CACHE=        no cache at all
#   RESCUE_CCACHE_SIZE   the compiler cache's size limit (default 2G)
#
# A cache that is unwritable or full gives a warning (scripts/cache.sh) and
# a build without it.  Worked out once, by the top-level make: a sub-make
# gets the result, possibly empty, through the environment.
ifeq ($(origin RESCUE_CACHE),undefined)
RESCUE_CACHE := $(if $(filter 0,$(shell id -u)),/var/cache/rescue-iso,$(or \
	$(XDG_CACHE_HOME),$(HOME)/.cache)/rescue-iso)
endif
ifneq ($(RESCUE_CACHE_CHECKED),$(RESCUE_CACHE):$(RESCUE_CACHE_MIN_FREE))
RESCUE_CACHE_USABLE := $(shell '$(TOP)/scripts/cache.sh' '$(RESCUE_CACHE)')
endif
RESCUE_CACHE_CHECKED := $(RESCUE_CACHE):$(RESCUE_CACHE_MIN_FREE)
override RESCUE_CACHE := $(RESCUE_CACHE_USABLE)
export RESCUE_CACHE RESCUE_CACHE_CHECKED RESCUE_CACHE_USABLE

RESCUE_CCACHE_SIZE ?= 2G
CCACHE_PATH := /usr/lib/ccache
HOST_FILES += $(CCACHE_PATH)/gcc
