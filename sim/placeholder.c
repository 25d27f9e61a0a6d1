/* placeholder */ int pn_sim_placeholder;
