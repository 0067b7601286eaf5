// SPDX-License-Identifier: GPL-2.0
/*
 * kc-finit FILE: loads a compressed module the way only the kernel
 * decompresses it: finit_module(fd, "", MODULE_INIT_COMPRESSED_FILE).
 * Debian 12's kmod (30) decompresses in user space and busybox's insmod
 * reads the file into memory, so neither asks the kernel's decompressor
 * (CONFIG_MODULE_DECOMPRESS). Linked statically for the initramfs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MODULE_INIT_COMPRESSED_FILE
#define MODULE_INIT_COMPRESSED_FILE 4 /* include/uapi/linux/module.h, 5.17+ */
#endif

int main(int argc, char **argv)
{
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: kc-finit MODULE.ko.{xz,zst,gz}\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "kc-finit: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (syscall(SYS_finit_module, fd, "", MODULE_INIT_COMPRESSED_FILE) != 0) {
		/* the wording of busybox's insmod, so patterns match both */
		fprintf(stderr, "kc-finit: can't insert '%s': %s\n", argv[1], strerror(errno));
		close(fd);
		return 1;
	}
	close(fd);
	return 0;
}
