/* compat/labs/04_brent_kung.h — the old name of course/04_brent_kung.h, for a scan.cu written before the course's
 * headers moved from common/labs/ to common/course/ (2026-11-27): it still builds and grades the
 * same. New code includes "course/04_brent_kung.h". */
#include "course/04_brent_kung.h"
