# shellcheck shell=bash
# env.sh — sourced by the GPU kit's run.sh: makes the kit's programs load the kit's libraries and
# its Open MPI find its own plugins, help texts and parameter files, wherever the kit was
# unpacked. Defines kit_env ROOT [CUDA_DIRS] [COMPAT] (ROOT: the unpacked payload).
#
# Why so many variables: Debian's Open MPI 4.1 was configured with prefix /usr and several
# directories given as absolute paths (libdir .../openmpi/lib, sysconfdir /etc/openmpi), so
# OPAL_PREFIX alone moves only the prefix-relative ones; Open MPI reads OPAL_<DIR> for each of
# the others (opal/mca/installdirs/env). PMIx (external on Debian) has its own prefix and plugin
# directory, moved the same way; hwloc's optional plugins are not carried, and HWLOC_PLUGINS_PATH keeps a machine's own
# (different version) out.

kit_env() {
  local root=$1 cuda_dirs=${2:-} compat=${3:-}
  local libpath=$root/lib
  [[ -n $cuda_dirs ]] && libpath=$libpath:$cuda_dirs
  [[ -n $compat ]] && libpath=$libpath:$root/compat
  export LD_LIBRARY_PATH=$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export PATH=$root/bin:$PATH

  export OPAL_PREFIX=$root OPAL_EXEC_PREFIX=$root OPAL_BINDIR=$root/bin OPAL_SBINDIR=$root/bin
  export OPAL_LIBDIR=$root/lib OPAL_LIBEXECDIR=$root/bin OPAL_PKGLIBDIR=$root/lib/openmpi
  export OPAL_DATAROOTDIR=$root/share OPAL_DATADIR=$root/share OPAL_PKGDATADIR=$root/share/openmpi
  export OPAL_SYSCONFDIR=$root/etc OPAL_INCLUDEDIR=$root/include OPAL_PKGINCLUDEDIR=$root/include
  export OMPI_MCA_mca_base_component_path=$root/lib/openmpi
  export OMPI_MCA_mca_base_param_files=$root/etc/openmpi-mca-params.conf
  # The GPU machines run commands as root; mpirun refuses root without these.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # One node: shared memory between ranks; no network interfaces to probe or warn about.
  export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_btl_base_warn_component_unused=0

  # PMIx reads PMIX_<DIR> (its pinstalldirs env component); a PMIX_MCA_ component path alone
  # loses to the parameter file in its compiled-in sysconfdir, which Debian's sets.
  export PMIX_PREFIX=$root PMIX_PKGLIBDIR=$root/lib/pmix PMIX_SYSCONFDIR=$root/etc PMIX_DATADIR=$root/share
  export HWLOC_PLUGINS_PATH=$root/lib/hwloc
}
