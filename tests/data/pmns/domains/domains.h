/*
 * Domain numbers for the test namespaces; a caller may predefine them.
 */
#ifndef SIMPLE
#define SIMPLE	253
#endif
