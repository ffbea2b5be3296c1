/* compat/labs/10_applications.h — the old name of course/10_applications.h, for a scan.cu written before the course's
 * headers moved from common/labs/ to common/course/ (2026-11-27): it still builds and grades the
 * same. New code includes "course/10_applications.h". */
#include "course/10_applications.h"
