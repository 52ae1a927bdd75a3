"sluice.graph"() <{function_type = () -> (), sym_name = "g"}> ({
^bb0:
}) : () -> ()
