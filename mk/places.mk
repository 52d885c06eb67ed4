# mk/places.mk: safe_places, the check that install and uninstall make first. The places are
# words in make and in the recipes' shell commands and sed scripts, unquoted or in single
# quotes, so a place that holds a character one of them reads as its own would be taken as
# something else: a space splits it in two (PREFIX="/opt/my tools" would create, overwrite and
# remove files at /opt/my and at my tools/... under the current folder), '&' sends a command
# to the background and runs the rest as another (and in sed's replacement is the matched
# text: slab.pc would say prefix=/opt/a@PREFIX@b), ';', '|', '<', '>', '(' and ')' end or
# redirect a command, a quote or a backslash breaks the quoting (the shell stops half way,
# and slab/_paths.py would not be Python), '*', '?', '[', ']', '{' and '}' are patterns, '%'
# is make's, '#' a comment, '!' history or negation. Such a place is refused before anything
# is done.
#
#   $(call safe_places,PREFIX DESTDIR ...)   stops make with "TARGET: NAME='VALUE' has a
#                                            space (make cannot install there): give a place
#                                            without one" (or "has the character &", ...)
#
# mk/completion.mk and mk/python.mk include it (and so the Makefile); included twice, it is
# read once. Their targets check their own places and $(INSTALL_PLACES), the Makefile's list
# of every place make install writes to, so that a part of install refuses what the rest would.

ifndef SLAB_PLACES_MK
SLAB_PLACES_MK := 1

slab_empty :=
slab_space := $(slab_empty) $(slab_empty)
slab_tab := $(slab_empty)	$(slab_empty)
slab_hash := \#
# The characters refused, besides blanks: one a word.
slab_unsafe := ' " \ ` & | ; < > ( ) * ? [ ] { } % ! $(slab_hash)
# The first unsafe character in the value of the variable named $(1), or nothing.
slab_unsafe_in = $(firstword $(foreach c,$(slab_unsafe),$(if $(findstring $(c),$($(1))),$(c))))
slab_place_bad = $(if $(findstring $(slab_space),$($(1)))$(findstring $(slab_tab),$($(1))),a space,$(if \
	$(call slab_unsafe_in,$(1)),the character $(call slab_unsafe_in,$(1))))
safe_places = $(foreach v,$(1),$(if $(call slab_place_bad,$(v)),$(error $@: $(v)='$($(v))' has \
	$(call slab_place_bad,$(v)) (make cannot install there): give a place without one)))

endif
