/* compat/labs/01_serial.h — the old name of course/01_serial.h, for a scan.cu written before the course's
 * headers moved from common/labs/ to common/course/ (2026-11-27): it still builds and grades the
 * same. New code includes "course/01_serial.h". */
#include "course/01_serial.h"
