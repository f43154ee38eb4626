/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Drivers for the devices present at boot: modprobe on every sysfs
 * modalias, in a child of PID 1 (coldplug.c).
 */
#ifndef RESCUE_COLDPLUG_H
#define RESCUE_COLDPLUG_H

#include <sys/types.h>

/* Starts the child; its pid, or -1 (said on the console). */
pid_t coldplug_start(void);

#endif
