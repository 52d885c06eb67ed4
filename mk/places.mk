# mk/places.mk: no_space, the check that install and uninstall make first: make splits its
# words at spaces, so a place with one in it (PREFIX="/opt/my tools") would be taken as two,
# and the targets would create, overwrite and remove files at the pieces (/opt/my, and
# my tools/... under the current folder). Such a place is refused before anything is done.
#
#   $(call no_space,PREFIX DESTDIR ...)   stops make with "TARGET: NAME='VALUE' has a space
#                                         (make cannot install there): give a place without one"
#
# mk/completion.mk and mk/python.mk include it (and so the Makefile); included twice, it is
# read once. Their targets check their own places and $(INSTALL_PLACES), the Makefile's list
# of every place make install writes to, so that a part of install refuses what the rest would.

ifndef SLAB_PLACES_MK
SLAB_PLACES_MK := 1

slab_empty :=
slab_space := $(slab_empty) $(slab_empty)
no_space = $(foreach v,$(1),$(if $(findstring $(slab_space),$($(v))),$(error $@: $(v)='$($(v))' \
	has a space (make cannot install there): give a place without one)))

endif
