// SPDX-License-Identifier: GPL-2.0-only
/* The text of a module file's failure, without its name. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "app_internal.h"

void
ms_app_modfile_why(const struct ms_modfile *mf, ms_err err, char *out, size_t cap)
{
	/* A failure about the module itself, not about a <dest> or .p7s. */
	bool is_module = mf->err_path == NULL || mf->err_path == mf->path;

	if (mf->why != NULL) {
		/* A compressed module's container (modfmt/zmodfile.c) says what is wrong. */
		snprintf(out, cap, "%s", mf->why);
	} else if (err == MS_E_ARG && mf->sys_errno == ELOOP && is_module) {
		snprintf(out, cap, "is a symbolic link; replacing it in place would replace the "
			 "link, not its target: name the target instead");
	} else if (err == MS_E_ARG && mf->sys_errno == ELOOP) {
		snprintf(out, cap, "is a symbolic link; not written through: remove it or "
			 "name another file");
	} else if (err == MS_E_ARG && mf->file_type != 0) {
		snprintf(out, cap, "is %s, not a regular file", ms_file_kind(mf->file_type));
	} else if (err == MS_E_ARG && mf->sys_errno == ENODATA) {
		snprintf(out, cap, "is empty");
	} else if (err == MS_E_ARG && mf->sys_errno == EFBIG && is_module) {
		snprintf(out, cap, "is larger than %d bytes, the most finit_module(2) reads",
			 INT_MAX);
	} else if (err == MS_E_CHANGED && mf->op != NULL && strcmp(mf->op, "read") == 0) {
		snprintf(out, cap, "changed while being read");
	} else if (err == MS_E_CHANGED) {
		snprintf(out, cap, "changed by another process meanwhile; left as it is");
	} else if (mf->sys_errno != 0) {
		snprintf(out, cap, "%s: %s", mf->op != NULL ? mf->op : "io",
			 strerror(mf->sys_errno));
	} else {
		snprintf(out, cap, "%s%s%s", mf->op != NULL ? mf->op : "",
			 mf->op != NULL ? ": " : "", ms_err_str(err));
	}
}
