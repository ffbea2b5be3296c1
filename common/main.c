/* main.c — the only main of a lab binary. Everything it does is in common/harness/ (session.c). */
#include "harness.h"

int main(int argc, char **argv)
{
    return lab_main(argc, argv);
}
