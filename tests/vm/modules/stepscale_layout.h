/* SPDX-License-Identifier: GPL-2.0 */
/* The layout of okp_stepscale's text (stepscale_text*.S), for it and for stepscale.c. */
#ifndef OKP_STEPSCALE_LAYOUT_H
#define OKP_STEPSCALE_LAYOUT_H

#define OKP_STEPS_FNS 1000	/* functions okp_steps_fn_<i> */
#define OKP_STEPS_PER_FN 10	/* probed instructions in each */

#endif
