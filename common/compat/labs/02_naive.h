/* compat/labs/02_naive.h — the old name of course/02_naive.h, for a scan.cu written before the course's
 * headers moved from common/labs/ to common/course/ (2026-11-27): it still builds and grades the
 * same. New code includes "course/02_naive.h". */
#include "course/02_naive.h"
