/* compat/labs/06_coarsened.h — the old name of course/06_coarsened.h, for a scan.cu written before the course's
 * headers moved from common/labs/ to common/course/ (2026-11-27): it still builds and grades the
 * same. New code includes "course/06_coarsened.h". */
#include "course/06_coarsened.h"
