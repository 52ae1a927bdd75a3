"sluice.graph"() <{function_type = (!sluice.tensor<[i=4], f32>) -> (),
                   arg_attrs = [{sluice.name = "a"}], sym_name = "g"}> ({
^bb0(%a: !sluice.tensor<[i=8], f32>):
  "sluice.return"() : () -> ()
}) : () -> ()
