/* compat/labs/05_blelloch.h — the old name of course/05_blelloch.h, for a scan.cu written before the course's
 * headers moved from common/labs/ to common/course/ (2026-11-27): it still builds and grades the
 * same. New code includes "course/05_blelloch.h". */
#include "course/05_blelloch.h"
