# mk/completion.mk: bash completions, one file per installed command (slab-pack ... and the
# front slab), written by scripts/mkcompletions from each built tool's --help so they cannot
# drift from it, into $(BUILD)/completions/, and installed where bash-completion loads them
# lazily by command name.
#
# The Makefile includes it after TOOLS is set. It also works alone, as tests/completion.bats
# uses it, with TOOLS given:  make -f mk/completion.mk TOOLS="build/bin/pack ..." completions

ifndef SLAB_COMPLETION_MK
SLAB_COMPLETION_MK := 1

BUILD   ?= build
PREFIX  ?= /usr/local
DESTDIR ?=
Q       ?= @
# Where bash-completion (2.x) looks for a command's completion when it is first completed.
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions

include $(dir $(lastword $(MAKEFILE_LIST)))places.mk

ifeq ($(strip $(TOOLS)),)
$(error mk/completion.mk: TOOLS is empty: include it after the Makefile sets TOOLS)
endif

# A completion per tool, and the front's (tools/slab.c): its tool names come from the tools,
# and its --help, run too, must list the same.
COMPLETION_TOOLS := $(filter-out %/slab,$(TOOLS))
COMPLETION_DIR   := $(BUILD)/completions
COMPLETIONS      := $(COMPLETION_DIR)/slab \
	$(patsubst %,$(COMPLETION_DIR)/slab-%,$(notdir $(COMPLETION_TOOLS)))

.PHONY: completions install-completions uninstall-completions

## completions: write the bash completions of slab and every slab-TOOL into build/completions
## from the tools' --help (scripts/mkcompletions; part of all)
completions: $(COMPLETION_DIR)/.stamp

# One run writes every file (all or none); the stamp stands for them.
$(COMPLETION_DIR)/.stamp: $(TOOLS) scripts/mkcompletions mk/completion.mk
	@$(if $(Q),echo "  GEN     $(COMPLETION_DIR)")
	$(Q)scripts/mkcompletions $(COMPLETION_DIR) $(TOOLS)
	$(Q)touch $@

## install-completions: install them into DESTDIR/PREFIX/share/bash-completion/completions
## (BASHCOMPDIR overrides the place; part of install)
install-completions: completions
	$(call safe_places,DESTDIR PREFIX BASHCOMPDIR $(INSTALL_PLACES))
	install -d $(DESTDIR)$(BASHCOMPDIR)
	install -m 644 $(COMPLETIONS) $(DESTDIR)$(BASHCOMPDIR)

## uninstall-completions: remove them (part of uninstall)
uninstall-completions:
	$(call safe_places,DESTDIR PREFIX BASHCOMPDIR $(INSTALL_PLACES))
	rm -f $(addprefix $(DESTDIR)$(BASHCOMPDIR)/,$(notdir $(COMPLETIONS)))

endif
