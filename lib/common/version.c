/* version.c: the linked library's version, for programs that check it against the header's. */
#include "slab.h"

unsigned slab_version(void)
{
	return SLAB_VERSION_NUMBER;
}

const char *slab_version_string(void)
{
	return SLAB_VERSION_STRING;
}
