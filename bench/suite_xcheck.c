// SPDX-License-Identifier: MIT
#include "bench.h"

void akb_suite_xcheck(void)
{
}
